// Package web is the browser side of the harness: it drives a real
// headless Chromium through the DevTools protocol and treats the browser
// as an evented terminal. The accessibility tree is the screen buffer,
// user actions are input events dispatched at the nodes the tree names,
// the run's trace (actions, the screen after each, console and network
// errors) is the recording, a screenshot compared with its baseline is a
// frame comparison, and navigation timing and largest contentful paint
// are checked against budgets.
//
// A scenario (Scenario, a JSON file the web-app kit writes under
// harness/web/) is a sequence of steps: actions (navigate, click, type,
// press) and checks (expect and absent on the accessibility tree, audit,
// screenshot). Actions find their target by role and accessible name, as
// a screen reader would, so a scenario reads as what the user sees and
// survives markup changes that keep the page's meaning.
//
// The package's invariant is that nothing passes without evidence. A
// check that could not be made (no browser, no baseline yet, a metric
// the browser did not report) is NotEvidence, never a pass; a scenario
// with no check at all is NotEvidence too. Every failed check keeps what
// shows the failure in the evidence directory: the screen it read, the
// diff image of a changed screenshot.
package web
