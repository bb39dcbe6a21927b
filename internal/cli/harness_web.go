package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/harness"
	"github.com/crystallize-dev/crystallize/internal/harness/web"
)

const harnessWebDoc = `web runs a web scenario (harness/web/*.json, written by the web-app
kit) in a fresh headless Chromium and checks it: the browser is an evented
terminal whose screen is the accessibility tree.

A scenario opens "url" (an http(s) URL, or a path under "serve", a
directory of the repository served on a loopback port for the run) and
replays its steps:

  {"navigate": "/about.html"}
  {"click": {"role": "button", "name": "Sign in"}}
  {"type": {"role": "textbox", "name": "Email"}, "text": "ada@example.com"}
  {"press": "Enter"}
  {"expect": [{"role": "heading", "name": "Welcome, ada@example.com"}]}
  {"absent": [{"role": "alert"}]}
  {"screen": "- RootWebArea \"Shop\"\n  - heading \"Cart\" level=1\n"}
  {"audit": {}}                      image-alt, label, button-name,
                                     link-name, color-contrast
  {"screenshot": "home", "policy": {"tolerance": 32, "maxDiffRatio": 0.001}}

and checks "budgets" ({"lcpMs", "loadMs", "domContentLoadedMs",
"transferBytes"}) on every page load. Targets are found by role and
accessible name and acted on with real mouse and key events; expect and
absent wait (timeoutMs, default 5000) as a user would.

The evidence directory (--evidence; by default $CRYSTALLIZE_EVIDENCE_DIR,
which "harness run" sets for each gate, else .crystallize/web/<name>)
receives trace.json, the recording of the run (each action with the
screen after it, console errors, failed requests), the screenshots, the
diff image of each compared screenshot (changed pixels in red) and the
screen each failed check read. --browser (or $CRYSTALLIZE_BROWSER) names
the Chromium; by default it is chromium on PATH. Baselines are
harness/web/baselines/<name>/<shot>.png; --update-baselines records them.

--replay TRACE replays a recording: its actions in order, each followed by
a screen step expecting the screen the recording saw (the whole
accessibility tree, line for line). A replay that fails keeps the diff of
the first screen that differs.

Nothing passes without evidence: a missing browser, a missing baseline, a
recorded baseline or a metric the browser did not report is "not
evidence". The exit code is 0 when every check passed, 1 when one failed,
and 77 when none failed but one could not be made ("harness run" reports
such a gate as not evidence, and --ci makes it block).

--json prints the report: {"scenario", "url", "status", "checks":
[{"step", "kind", "name", "status", "message", "violations", "evidence"}],
"trace"}.`

func newHarnessWebCmd(e *env) *cobra.Command {
	var asJSON, update, replay bool
	var root, evidence, browser string
	cmd := &cobra.Command{
		Use:   "web SCENARIO | --replay TRACE",
		Short: "Replay a web scenario in headless Chromium and check it",
		Long:  harnessWebDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s *web.Scenario
			var err error
			if replay {
				var rec *web.Recording
				if rec, err = web.LoadRecording(args[0]); err == nil {
					s, err = web.Replay(rec)
				}
			} else {
				s, err = web.LoadScenario(args[0])
			}
			if err != nil {
				return err
			}
			if evidence == "" {
				evidence = e.getenv(harness.EvidenceEnv)
			}
			if browser == "" {
				browser = e.getenv("CRYSTALLIZE_BROWSER")
			}
			if evidence == "" {
				evidence = filepath.Join(root, harness.StateDir, "web", s.Name)
			}
			rep, err := web.Run(cmd.Context(), s, web.Options{Root: root, EvidenceDir: evidence, UpdateBaselines: update, Browser: browser})
			if err != nil {
				return err
			}
			if err := printResult(e, asJSON, rep, func(w io.Writer) { writeWebReport(w, rep, evidence) }); err != nil {
				return err
			}
			switch rep.Status {
			case web.Failed:
				return failuref("web scenario %s: a check failed", s.Name)
			case web.NotEvidence:
				return exitError{code: harness.ExitNotEvidence, err: fmt.Errorf("web scenario %s: not evidence: a check could not be made", s.Name)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&root, "root", ".", "repository root: serve and the baselines are under it")
	cmd.Flags().StringVar(&evidence, "evidence", "", "directory for the trace, screenshots and diff images")
	cmd.Flags().BoolVar(&replay, "replay", false, "the argument is a recording (trace.json): replay its actions and expect its screens")
	cmd.Flags().BoolVar(&update, "update-baselines", false, "record each screenshot as its baseline (the check is then not evidence)")
	cmd.Flags().StringVar(&browser, "browser", "", "Chromium executable (default: $CRYSTALLIZE_BROWSER, else chromium on PATH)")
	return cmd
}

func webStatus(s web.Status) string {
	switch s {
	case web.Passed:
		return "pass"
	case web.Failed:
		return "FAIL"
	}
	return "NOT EVIDENCE"
}

func writeWebReport(w io.Writer, rep *web.Report, evidence string) {
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "%s step %d %s %s", webStatus(c.Status), c.Step, c.Kind, c.Name)
		if c.Message != "" {
			fmt.Fprintf(w, ": %s", c.Message)
		}
		fmt.Fprintln(w)
		for _, v := range c.Violations {
			fmt.Fprintf(w, "    %s %s: %s\n", v.Rule, v.Element, v.Message)
		}
		if len(c.Evidence) > 0 {
			var paths []string
			for _, p := range c.Evidence {
				paths = append(paths, filepath.Join(evidence, p))
			}
			fmt.Fprintf(w, "    evidence: %s\n", strings.Join(paths, " "))
		}
	}
	fmt.Fprintf(w, "scenario %s %s, recording %s\n", rep.Scenario, strings.ReplaceAll(string(rep.Status), "_", " "), filepath.Join(evidence, rep.Trace))
}
