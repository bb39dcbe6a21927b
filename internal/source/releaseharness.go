package source

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Schema markers of a release-harness fixture directory. v3 adds
// side_effects_known and side_effects to release-step and tool-observation
// rows; nothing else changed, so both are read by the same code.
const (
	ReleaseHarnessV1 = "release_harn.crystallization_input.v1"
	ReleaseHarnessV3 = "release_harn.crystallization_input.v3"
)

// Approval boundaries of the steps a release-harness trace cannot run
// without a person: the agent-authored audit, and everything that has to do
// with recovering from a failed step (the advice, the failed step itself
// and any later step that re-runs it).
const (
	BoundaryReleaseAudit = "release_audit_review"
	BoundaryRecovery     = "recovery_review"
)

// UnknownSideEffects is the kind of the side-effect record an action gets
// when its row does not say what it changed (a v1 row, or a v3 row with
// side_effects_known false). Unknown is not none: the record keeps the
// step out of the plan-only class and its risk at least medium, and its
// metadata says side_effects_known: false.
const UnknownSideEffects = "unknown_side_effects"

// ErrReleaseHarnessSchema is returned (wrapped, naming the marker) for a
// fixture whose manifest or rows carry a schema marker this package does
// not read. Bumping the marker is how the producer signals an incompatible
// change, so guessing would be wrong.
var ErrReleaseHarnessSchema = errors.New("unsupported release-harness schema")

// ErrNoActions is returned for a fixture whose streams hold no event.
var ErrNoActions = errors.New("release-harness fixture yields no actions")

// Release-harness file names, used when manifest.files does not name them.
const (
	harnessManifest      = "manifest.json"
	harnessRun           = "release-run.json"
	harnessDeterministic = "deterministic-events.jsonl"
	harnessAgent         = "agent-events.jsonl"
	harnessTools         = "tool-observations.jsonl"
)

// maxHarnessFile bounds each file of a fixture directory: they are read
// whole. Real fixtures are kilobytes.
const maxHarnessFile = 64 << 20

// ReleaseHarness is what LoadReleaseHarness read besides the trace: the
// release identity and every event with where it came from and which
// action it became. It is the input of the segment and recovery
// summaries.
type ReleaseHarness struct {
	// Schema is the manifest's schema marker, ReleaseHarnessV1 or
	// ReleaseHarnessV3.
	Schema string
	// RunID is manifest.run_id.
	RunID string
	// Mode, CurrentVersion and NextVersion come from manifest.release.
	Mode, CurrentVersion, NextVersion string
	// Manifest is manifest.json as parsed; Run is release-run.json, or nil
	// when the fixture has none.
	Manifest map[string]any
	Run      any
	// Events are the rows of the three streams in trace order: Events[i]
	// became the trace's action i.
	Events []HarnessEvent
	// Missing are the optional files the manifest's "files" map lists but
	// the directory does not have, in the order they are read. The
	// fixture still loads (each is optional), but the manifest promised
	// them, so a caller should say which one is absent.
	Missing []MissingFile
}

// CodeMissingOptionalFile is the code of a MissingFile warning.
const CodeMissingOptionalFile = "missing_optional_file"

// MissingFile is an optional file of a fixture directory that its
// manifest lists and the directory lacks.
type MissingFile struct {
	// Name is the file name looked for; Path the JSON path of its entry
	// in the manifest, such as $.files.release_run_json; File the
	// manifest's path.
	Name, Path, File string
	// Role says what the file would have held.
	Role string
}

// String formats m as "manifest: $.files.key: name is listed but absent; …".
func (m MissingFile) String() string {
	return fmt.Sprintf("%s: %s: %s is listed but not in the fixture directory; it is optional (%s), so the run is read without it", m.File, m.Path, m.Name, m.Role)
}

// Stream names a release-harness event stream.
type Stream string

// The three event streams.
const (
	StreamDeterministic Stream = "deterministic"
	StreamAgent         Stream = "agent"
	StreamTools         Stream = "tool"
)

// HarnessEvent is one row of a release-harness stream.
type HarnessEvent struct {
	Stream    Stream
	File      string // path as given to the loader
	Line      int    // 1-based
	Type      string // event_type
	Source    string // "deterministic" or "agent" as the row says
	Timestamp string
	Data      map[string]any
	// SideEffectsKnown and SideEffects are a v3 row's side-effect
	// evidence (side_effects_known, side_effects), read from data or, when
	// data has none, from the row itself. Nil SideEffectsKnown means the
	// row does not say.
	SideEffectsKnown *bool
	SideEffects      []trace.SideEffect
	// Mirrors are the rows of other streams that record this same failure
	// (the tool observation of a failed release step). They are folded
	// into this event rather than made steps of their own: as a workflow
	// step each would run the failed command once more.
	Mirrors []HarnessEvent
}

// StepName is the release step the event is about: data.name of a
// release step, data.step_name of a tool observation or recovery advice.
func (e *HarnessEvent) StepName() string {
	if e.Type == "release_step_recorded" {
		s, _ := e.Data["name"].(string)
		return s
	}
	s, _ := e.Data["step_name"].(string)
	return s
}

// Failed reports whether the event records a command that failed
// (data.success false).
func (e *HarnessEvent) Failed() bool {
	b, ok := e.Data["success"].(bool)
	return ok && !b
}

func (e *HarnessEvent) str(key string) string {
	s, _ := e.Data[key].(string)
	return s
}

// LoadReleaseHarness reads the release-harness fixture directory dir, as
// release_harn.harn writes it: manifest.json (required; schema marker
// ReleaseHarnessV1 or ReleaseHarnessV3, any other is refused with
// ErrReleaseHarnessSchema), release-run.json (optional), and the JSON Lines
// streams deterministic-events.jsonl, agent-events.jsonl and
// tool-observations.jsonl (each optional: a missing stream is empty). The
// manifest's "files" map may rename them, to plain names inside dir. An
// optional file that the map lists but the directory lacks is no error;
// it is recorded in ReleaseHarness.Missing, naming the file, for the
// caller to warn about.
//
// The trace is the workflow: every row becomes one action (except a failed
// tool observation that records a failed release step again, which is
// folded into that step: see foldMirroredFailures), and the actions
// are in timestamp order (a stable sort, so rows with the same timestamp
// keep deterministic before tool observations before agent rows, each in
// file order). Agent-authored review attempts and recovery advice are fuzzy
// model calls behind a required approval (BoundaryReleaseAudit,
// BoundaryRecovery), and every other agent-authored step waits at
// BoundaryReleaseAudit; so is a failed release step and every later step that
// re-runs it, so that a workflow never re-runs a failing step without a
// person. Release steps and tool observations carry the side effects their
// v3 rows declare, or an UnknownSideEffects record when the row does not
// declare them. A tool observation that only reads (read_file, or a shell
// command the built-in normalize tables read as a read: git log, git
// diff, git status, cat) is a trace.KindObservation, as it is in an
// agent's log, so that what it printed is kept as observed state and
// never held against another release.
//
// The trace's source hash is sha256 over each file read, as its name, a
// NUL, its bytes and a NUL, in the order above, so it changes when any of
// them does. Every problem in the input is reported, as a trace.ErrorList
// of errors positioned at file, line and JSON path. A directory whose
// streams hold no row fails with ErrNoActions.
func LoadReleaseHarness(dir string) (*trace.Trace, *ReleaseHarness, error) {
	h := sha256.New()
	// The files are read with mine's policy for trace directories: a
	// regular file, or a symlink to one inside the directory; nothing
	// else (a symlink to /dev/zero or out of the directory, a FIFO, a
	// device) is opened, since it could be endless, block, or read what
	// the directory's owner did not put there.
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		root = dir // the manifest's read reports the problem
	}
	read := func(name string, required bool) ([]byte, string, error) {
		p := filepath.Join(dir, name)
		st, err := os.Lstat(p)
		if err != nil {
			if !required && errors.Is(err, os.ErrNotExist) {
				return nil, p, nil
			}
			return nil, p, err
		}
		open := p
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, size, problem := checkSymlink(root, p, dir)
			if problem != "" {
				return nil, p, fmt.Errorf("%s: %s", p, problem)
			}
			open = target
			if size > maxHarnessFile {
				return nil, p, fmt.Errorf("%s: %d bytes, more than the %d a fixture file may hold", p, size, maxHarnessFile)
			}
		case !st.Mode().IsRegular():
			return nil, p, fmt.Errorf("%s: not a regular file", p)
		case st.Size() > maxHarnessFile:
			return nil, p, fmt.Errorf("%s: %d bytes, more than the %d a fixture file may hold", p, st.Size(), maxHarnessFile)
		}
		b, err := readLimited(open, maxHarnessFile)
		if err != nil {
			return nil, p, fmt.Errorf("%s: %w", p, err)
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
		return b, p, nil
	}

	raw, mpath, err := read(harnessManifest, true)
	if err != nil {
		return nil, nil, fmt.Errorf("reading release-harness manifest: %w", err)
	}
	doc, err := trace.ParseJSON(bytes.TrimPrefix(raw, utf8BOM), mpath, 0)
	if err != nil {
		return nil, nil, err
	}
	f := &trace.Fields{File: mpath}
	m, ok := doc.(map[string]any)
	if !ok {
		f.TypeError("$", "object", doc)
		return nil, nil, f.Err()
	}
	rh := &ReleaseHarness{Manifest: m}
	rh.Schema = f.ReqString(m, "$", "schema_version")
	if rh.Schema != "" && rh.Schema != ReleaseHarnessV1 && rh.Schema != ReleaseHarnessV3 {
		return nil, nil, fmt.Errorf("%s: $.schema_version: %w %q (want %s or %s)", mpath, ErrReleaseHarnessSchema, rh.Schema, ReleaseHarnessV1, ReleaseHarnessV3)
	}
	rh.RunID = f.OptString(m, "$", "run_id")
	rel := f.OptObject(m, "$", "release")
	rh.Mode = f.OptString(rel, "$.release", "mode")
	rh.CurrentVersion = f.OptString(rel, "$.release", "current_version")
	rh.NextVersion = f.OptString(rel, "$.release", "next_version")
	files := f.OptObject(m, "$", "files")
	name := func(key, def string) string {
		s := f.OptString(files, "$.files", key)
		if s == "" {
			return def
		}
		if !filepath.IsLocal(s) || strings.ContainsAny(s, `/\`) {
			f.Errorf("$.files."+key, "%q is not a file name inside the fixture directory", s)
			return def
		}
		return s
	}
	runName := name("release_run_json", harnessRun)
	streams := []struct {
		stream Stream
		name   string
		key    string
		role   string
	}{
		{StreamDeterministic, name("deterministic_events_jsonl", harnessDeterministic), "deterministic_events_jsonl", "deterministic events; read as empty"},
		{StreamTools, name("tool_observations_jsonl", harnessTools), "tool_observations_jsonl", "tool observations; read as empty"},
		{StreamAgent, name("agent_events_jsonl", harnessAgent), "agent_events_jsonl", "agent events; read as empty"},
	}
	// missing records an absent optional file that the manifest lists.
	missing := func(key, file, role string) {
		if _, listed := files[key]; listed {
			rh.Missing = append(rh.Missing, MissingFile{Name: file, Path: "$.files." + key, File: mpath, Role: role})
		}
	}
	errs := f.Errs

	if b, p, err := read(runName, false); err != nil {
		return nil, nil, fmt.Errorf("reading release-harness run: %w", err)
	} else if b == nil {
		missing("release_run_json", runName, "the full release-run payload")
	} else {
		v, err := trace.ParseJSON(bytes.TrimPrefix(b, utf8BOM), p, 0)
		if err != nil {
			errs = appendErrs(errs, err)
		}
		rh.Run = v
	}

	type row struct {
		ev HarnessEvent
		at time.Time
	}
	var rows []row
	for _, s := range streams {
		b, p, err := read(s.name, false)
		if err != nil {
			return nil, nil, fmt.Errorf("reading release-harness stream: %w", err)
		}
		if b == nil {
			missing(s.key, s.name, s.role)
		}
		for i, line := range bytes.Split(b, []byte("\n")) {
			if i == 0 {
				line = bytes.TrimPrefix(line, utf8BOM)
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			ev, at, rowErrs := decodeHarnessRow(line, p, i+1, s.stream, rh.Schema)
			errs = append(errs, rowErrs...)
			if len(rowErrs) == 0 {
				rows = append(rows, row{ev, at})
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, nil, errs
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNoActions)
	}
	slices.SortStableFunc(rows, func(a, b row) int { return a.at.Compare(b.at) })
	events := make([]HarnessEvent, len(rows))
	for i, r := range rows {
		events[i] = r.ev
	}
	rh.Events = foldMirroredFailures(events)

	t := rh.trace(filepath.Base(filepath.Clean(dir)))
	t.SourceHash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	trace.Normalize(t)
	return t, rh, nil
}

// ReleaseParameterKeys are the members of a release's identity that
// change from one release to the next: its versions, the previous tag,
// the bump, the branch it is cut on and the branch it is cut from. They
// are the parameters of a workflow made from one release run
// (ReleaseHarness.Parameters). mode, repo and mock are not among them:
// the mode chooses which steps run (another mode is another workflow),
// and the repository and the mock switch are where and how the workflow
// runs, not what it releases.
var ReleaseParameterKeys = []string{"current_version", "next_version", "bump", "latest_tag", "base_branch", "target_release_branch"}

// Parameters returns the release's values of ReleaseParameterKeys: the
// manifest's release member, else the release analysis's data (the
// harness writes the bump there only), for the keys that hold a
// non-empty string.
func (rh *ReleaseHarness) Parameters() map[string]string {
	rel, _ := rh.Manifest["release"].(map[string]any)
	var analysis map[string]any
	for i := range rh.Events {
		if rh.Events[i].Type == "release_analysis" {
			analysis = rh.Events[i].Data
			break
		}
	}
	out := map[string]string{}
	for _, k := range ReleaseParameterKeys {
		for _, src := range []map[string]any{rel, analysis} {
			if s, ok := src[k].(string); ok && s != "" {
				out[k] = s
				break
			}
		}
	}
	return out
}

// foldMirroredFailures returns events without the failed tool
// observations that record a failed release step a second time, each
// folded into that step's Mirrors. An observation mirrors a release step
// when both failed and they share the step name or the command; each step
// takes at most one observation, so a later failure of the same command (a
// retry that failed again) stays a step of its own.
func foldMirroredFailures(events []HarnessEvent) []HarnessEvent {
	mirrors := func(obs, step *HarnessEvent) bool {
		if obs.StepName() != "" && obs.StepName() == step.StepName() {
			return true
		}
		return obs.str("command") != "" && obs.str("command") == step.str("command")
	}
	folded := make([]bool, len(events))
	paired := make([]bool, len(events))
	for i := range events {
		obs := &events[i]
		if obs.Type != "tool_observation" || !obs.Failed() {
			continue
		}
		for j := range events {
			step := &events[j]
			if step.Type == "release_step_recorded" && step.Failed() && !paired[j] && mirrors(obs, step) {
				paired[j], folded[i] = true, true
				step.Mirrors = append(step.Mirrors, *obs)
				break
			}
		}
	}
	out := events[:0:0]
	for i := range events {
		if !folded[i] {
			out = append(out, events[i])
		}
	}
	return out
}

// IsReleaseHarnessDir reports whether dir is a release-harness fixture
// directory: it holds a manifest.json (a regular file) whose schema_version
// is a release-harness marker, of any version, so that a directory of an
// unsupported version is still read as one and refused by name rather
// than as a pile of unknown trace files.
func IsReleaseHarnessDir(dir string) bool {
	p := filepath.Join(dir, harnessManifest)
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxHarnessFile {
		return false
	}
	b, err := readLimited(p, maxHarnessFile)
	if err != nil {
		return false
	}
	var m struct {
		SchemaVersion string `json:"schema_version"`
	}
	if json.Unmarshal(bytes.TrimPrefix(b, utf8BOM), &m) != nil {
		return false
	}
	return strings.HasPrefix(m.SchemaVersion, "release_harn.crystallization_input.")
}

// appendErrs appends err's entries to l when it is a trace.ErrorList (or
// wraps one), else err as one entry.
func appendErrs(l trace.ErrorList, err error) trace.ErrorList {
	var el trace.ErrorList
	if errors.As(err, &el) {
		return append(l, el...)
	}
	return append(l, &trace.Error{Msg: err.Error()})
}

// decodeHarnessRow parses one stream row and checks the members the
// conversion reads. Members it does not read are kept in Data as they are.
func decodeHarnessRow(line []byte, file string, n int, stream Stream, schema string) (HarnessEvent, time.Time, trace.ErrorList) {
	ev := HarnessEvent{Stream: stream, File: file, Line: n}
	v, err := trace.ParseJSON(line, file, n)
	if err != nil {
		return ev, time.Time{}, appendErrs(nil, err)
	}
	f := &trace.Fields{File: file, Line: n}
	obj, ok := v.(map[string]any)
	if !ok {
		f.TypeError("$", "object", v)
		return ev, time.Time{}, f.Errs
	}
	if s := f.OptString(obj, "$", "schema_version"); s != "" && s != schema {
		if s != ReleaseHarnessV1 && s != ReleaseHarnessV3 {
			f.Errorf("$.schema_version", "%v %q (want %s or %s)", ErrReleaseHarnessSchema, s, ReleaseHarnessV1, ReleaseHarnessV3)
		} else {
			f.Errorf("$.schema_version", "row schema %q differs from the manifest's %q", s, schema)
		}
	}
	ev.Type = f.ReqString(obj, "$", "event_type")
	ev.Source = f.OptString(obj, "$", "source")
	ev.Timestamp = f.ReqString(obj, "$", "timestamp")
	var at time.Time
	if ev.Timestamp != "" {
		at, err = time.Parse(time.RFC3339Nano, ev.Timestamp)
		if err != nil {
			f.Errorf("$.timestamp", "%q is not an RFC 3339 time", ev.Timestamp)
		}
	}
	ev.Data = f.OptObject(obj, "$", "data")
	if ev.Data == nil {
		ev.Data = map[string]any{}
	}
	for _, k := range []string{"name", "step_name", "command", "tool", "path", "text", "finding", "classification", "recovery_hint"} {
		f.OptString(ev.Data, "$.data", k)
	}
	f.OptBool(ev.Data, "$.data", "success")
	// v3 evidence may sit in data or on the row itself; data wins.
	for _, p := range []struct {
		obj  map[string]any
		path string
	}{{ev.Data, "$.data"}, {obj, "$"}} {
		if known := f.OptBool(p.obj, p.path, "side_effects_known"); known != nil && ev.SideEffectsKnown == nil {
			ev.SideEffectsKnown = known
		}
		if arr, ok := f.OptArray(p.obj, p.path, "side_effects"); ok && ev.SideEffects == nil {
			ev.SideEffects = decodeSideEffects(f, arr, p.path+".side_effects")
		}
	}
	return ev, at, f.Errs
}

// decodeSideEffects checks a v3 side_effects list and converts it.
func decodeSideEffects(f *trace.Fields, arr []any, p string) []trace.SideEffect {
	out := make([]trace.SideEffect, 0, len(arr))
	for i, v := range arr {
		ep := trace.Element(p, i)
		o, ok := v.(map[string]any)
		if !ok {
			f.TypeError(ep, "object", v)
			continue
		}
		se := trace.SideEffect{
			Kind:       f.ReqString(o, ep, "kind"),
			Target:     f.OptString(o, ep, "target"),
			Capability: f.OptString(o, ep, "capability"),
			Mutation:   f.OptString(o, ep, "mutation"),
			Metadata:   f.OptObject(o, ep, "metadata"),
		}
		out = append(out, se)
	}
	return out
}

// trace converts the events into the trace, one action per event.
func (rh *ReleaseHarness) trace(source string) *trace.Trace {
	t := &trace.Trace{
		Version:    trace.SchemaVersion,
		ID:         "release_harn_" + cmp.Or(rh.RunID, source),
		Source:     source,
		WorkflowID: "release_harn",
		Actions:    make([]trace.Action, len(rh.Events)),
		Metadata: map[string]any{
			"goal":                "release_harn " + cmp.Or(rh.Mode, "release"),
			"release_harn.schema": rh.Schema,
			"release_harn.run_id": rh.RunID,
		},
	}
	if rel, ok := rh.Manifest["release"].(map[string]any); ok {
		for k, v := range rel {
			t.Metadata["release."+k] = v
		}
	}
	t.StartedAt = rh.Events[0].Timestamp
	t.FinishedAt = rh.Events[len(rh.Events)-1].Timestamp

	// failed are the failed release steps and tool observations so far,
	// so that a later step running one again is recognized.
	var failed []*HarnessEvent
	for i := range rh.Events {
		ev := &rh.Events[i]
		a := &t.Actions[i]
		a.ID = fmt.Sprintf("%s:%d", filepath.Base(ev.File), ev.Line)
		a.Timestamp = ev.Timestamp
		a.Metadata = map[string]any{"event_type": ev.Type, "stream": string(ev.Stream)}
		if ev.Source != "" {
			a.Metadata["source"] = ev.Source
		}
		switch {
		case ev.Stream == StreamAgent && ev.Type == "agent_review_attempt":
			name := cmp.Or(ev.str("name"), "review")
			a.Kind = trace.KindModelCall
			a.Name = "agent_review." + name
			a.Parameters = map[string]any{"review": name}
			a.Inputs = ev.Data
			a.ObservedOutput = ev.Data["text"]
			a.Cost = modelCost(ev.Data)
			setFuzzy(a)
			a.Approval = &trace.Approval{
				Required: true, Boundary: BoundaryReleaseAudit,
				Prompt: fmt.Sprintf("Accept the agent-authored %s review? It is model output, not deterministic truth.", name),
			}
			addNote(a, "agent_review_attempt: model-authored audit, advisory only; a person accepts it at "+BoundaryReleaseAudit)
		case ev.Stream == StreamAgent && ev.Type == "agent_recovery_advice":
			step := cmp.Or(ev.StepName(), "step")
			a.Kind = trace.KindModelCall
			a.Name = "agent_recovery_advice." + step
			a.Parameters = map[string]any{"failed_step": step}
			a.Inputs = ev.Data
			a.ObservedOutput = ev.Data["text"]
			a.Cost = modelCost(ev.Data)
			setFuzzy(a)
			a.Approval = &trace.Approval{
				Required: true, Boundary: BoundaryRecovery,
				Prompt: fmt.Sprintf("Review the agent's recovery advice for the failed step %s. It is advisory only: nothing is re-run because of it.", step),
			}
			a.Metadata["failed_step"] = step
			addNote(a, fmt.Sprintf("agent_recovery_advice: advisory only; the workflow never re-runs %s without a person at %s", step, BoundaryRecovery))
		case ev.Type == "release_analysis":
			a.Kind = "release_analysis"
			a.Name = "analyze_release"
			a.Parameters = pick(ev.Data, "repo", "mode", "bump", "current_version", "next_version", "base_branch", "target_release_branch")
			a.ObservedOutput = ev.Data
			a.Capabilities = []string{"fs.read", "git.read"}
			setDeterministic(a)
		case ev.Type == "changelog_audit_inputs":
			a.Kind = "changelog_audit"
			a.Name = "collect_changelog_audit_inputs"
			a.Parameters = pick(ev.Data, "expected_version")
			a.ObservedOutput = ev.Data
			a.Capabilities = []string{"fs.read", "git.read"}
			setDeterministic(a)
		case ev.Type == "deterministic_finding":
			a.Kind = "release_finding"
			a.Name = "record_finding"
			a.Parameters = pick(ev.Data, "finding")
			a.ObservedOutput = ev.Data
			setDeterministic(a)
		case ev.Type == "release_step_recorded":
			name := cmp.Or(ev.StepName(), "step")
			a.Kind = "release_step"
			a.Name = name
			a.Parameters = pick(ev.Data, "command")
			a.ObservedOutput = pick(ev.Data, "status", "success")
			a.Capabilities = []string{"shell.exec"}
			for _, k := range []string{"classification", "recovery_hint", "success"} {
				if v, ok := ev.Data[k]; ok {
					a.Metadata[k] = v
				}
			}
			setDeterministic(a)
			sideEffects(a, ev, name, "shell.exec")
			failed = gateRecovery(a, ev, name, failed)
			if len(ev.Mirrors) > 0 {
				var at []any
				for _, m := range ev.Mirrors {
					at = append(at, fmt.Sprintf("%s:%d", filepath.Base(m.File), m.Line))
				}
				a.Metadata["also_recorded_at"] = at
				addNote(a, fmt.Sprintf("the same failure is also recorded at %v; it is one step, run once", at))
			}
		case ev.Type == "tool_observation":
			tool := cmp.Or(ev.str("tool"), "tool")
			a.Kind = trace.KindToolCall
			a.Name = tool
			a.Parameters = pick(ev.Data, "command", "path")
			a.ObservedOutput = pick(ev.Data, "stdout", "stderr", "status", "success")
			capability := tool + ".call"
			switch tool {
			case "shell":
				capability = "shell.exec"
			case "read_file":
				capability = "fs.read"
			}
			a.Capabilities = []string{capability}
			if readsOnly(tool, ev.str("command")) {
				// What a read printed (the commits since the last tag,
				// a diff's stat, the changelog) is the state it found,
				// which the next release finds changed: mining keeps it
				// as observed output, never as an output to reproduce.
				a.Kind = trace.KindObservation
			}
			if s := ev.StepName(); s != "" {
				a.Metadata["step_name"] = s
			}
			if ev.Source == "agent" {
				f := false
				a.Deterministic = &f
			} else {
				setDeterministic(a)
			}
			target := cmp.Or(ev.StepName(), ev.str("command"), ev.str("path"), tool)
			sideEffects(a, ev, target, capability)
			failed = gateRecovery(a, ev, target, failed)
		default:
			// A row this version does not interpret is still a step: the
			// trace is the workflow. An agent row is model output.
			a.Kind = trace.Kind(ev.Type)
			a.Name = ev.Type
			a.ObservedOutput = ev.Data
			if ev.Stream == StreamAgent && ev.Type != "agent_review_artifacts" {
				a.Kind = trace.KindModelCall
				setFuzzy(a)
			} else {
				setDeterministic(a)
			}
		}
		// Every agent-authored step waits for a person, whatever its type
		// (agent_review_artifacts, a tool the agent ran, a row this
		// version does not know): model output is not deterministic
		// truth, so the workflow cannot run it unreviewed.
		if (ev.Stream == StreamAgent || ev.Source == "agent") && a.Approval == nil {
			a.Approval = &trace.Approval{
				Required: true, Boundary: BoundaryReleaseAudit,
				Prompt: fmt.Sprintf("Accept the agent-authored %s? It is model output, not deterministic truth.", ev.Type),
			}
			addNote(a, fmt.Sprintf("%s: agent-authored; a person accepts it at %s", ev.Type, BoundaryReleaseAudit))
		}
	}
	return t
}

// readsOnly reports whether a tool observation only reads: the
// harness's read_file, or a shell command that the built-in normalize
// tables make an observation, as they do in an agent's log (git log, git
// diff, git status, cat; never git push or a script).
func readsOnly(tool, command string) bool {
	switch tool {
	case "read_file":
		return true
	case "shell":
	default:
		return false
	}
	if strings.TrimSpace(command) == "" {
		return false
	}
	acts := normalize.Default().Actions(normalize.Call{Tool: "shell", Args: map[string]any{"command": command}})
	for i := range acts {
		if acts[i].Kind != trace.KindObservation {
			return false
		}
	}
	return len(acts) > 0
}

// gateRecovery puts a required BoundaryRecovery approval on the action of
// a release step or tool observation that failed, or that runs again a
// step or command that failed earlier (a retry, or the observation of the
// failed command, which as a workflow step would run it again): the
// workflow never re-runs a failing step unless a person says so. It
// returns failed with ev added when ev failed.
func gateRecovery(a *trace.Action, ev *HarnessEvent, name string, failed []*HarnessEvent) []*HarnessEvent {
	if f := rerunOf(failed, ev); f != nil {
		a.Approval = &trace.Approval{
			Required: true, Boundary: BoundaryRecovery,
			Prompt: fmt.Sprintf("%s runs the failed step %s again; approve only after reviewing the failure and the recovery advice.", name, cmp.Or(f.StepName(), f.str("command"))),
		}
		a.Metadata["recovery_of"] = cmp.Or(f.StepName(), f.str("command"))
		addNote(a, fmt.Sprintf("runs the failed step %s again; the workflow waits for a person at %s first", cmp.Or(f.StepName(), f.str("command")), BoundaryRecovery))
	} else if ev.Failed() {
		a.Approval = &trace.Approval{
			Required: true, Boundary: BoundaryRecovery,
			Prompt: fmt.Sprintf("%s failed in the recorded run (%s); approve before running it again.", name, cmp.Or(ev.str("classification"), "no classification")),
		}
		addNote(a, fmt.Sprintf("%s failed in the recorded run; recovery is required before it runs again", name))
	}
	if ev.Failed() {
		failed = append(failed, ev)
	}
	return failed
}

// rerunOf returns the failed step or command ev runs again: one with ev's
// command, one whose name ev's name is or starts with ("push" →
// "push-no-verify"), or one whose command's first two words ev's command
// shares ("git push …").
func rerunOf(failed []*HarnessEvent, ev *HarnessEvent) *HarnessEvent {
	name, cmd := ev.StepName(), commandHead(ev.str("command"))
	for _, f := range failed {
		if f.str("command") != "" && f.str("command") == ev.str("command") {
			return f
		}
		fn := f.StepName()
		if fn != "" && (name == fn || strings.HasPrefix(name, fn+"-") || strings.HasPrefix(name, fn+"_")) {
			return f
		}
		if fc := commandHead(f.str("command")); fc != "" && fc == cmd {
			return f
		}
	}
	return nil
}

func commandHead(cmd string) string {
	w := strings.Fields(cmd)
	if len(w) < 2 {
		return ""
	}
	return w[0] + " " + w[1]
}

// sideEffects sets the action's side effects from a v3 row's evidence, or
// records that they are unknown.
func sideEffects(a *trace.Action, ev *HarnessEvent, target, capability string) {
	known := ev.SideEffectsKnown != nil && *ev.SideEffectsKnown
	a.Metadata["side_effects_known"] = known
	if known {
		a.SideEffects = ev.SideEffects
		return
	}
	why := "the row does not declare its side effects (schema v1, or side_effects_known absent)"
	if ev.SideEffectsKnown != nil {
		why = "the row says its side effects are not known"
	}
	// The declared list, if any, is kept beside the unknown record for a
	// reviewer: it is what was seen, not all that happened.
	addNote(a, "side effects unknown: "+why+"; unknown is not none, so review what this step changes")
	a.SideEffects = append([]trace.SideEffect{{
		Kind: UnknownSideEffects, Target: target, Capability: capability,
		Metadata: map[string]any{"side_effects_known": false, "reason": why},
	}}, ev.SideEffects...)
}

// addNote appends a note for the reviewer to the action's metadata
// "review_notes", which ingest copies into the candidate step's review
// notes.
func addNote(a *trace.Action, note string) {
	notes, _ := a.Metadata["review_notes"].([]any)
	a.Metadata["review_notes"] = append(notes, note)
}

func setDeterministic(a *trace.Action) {
	t, f := true, false
	a.Deterministic, a.Fuzzy = &t, &f
}

func setFuzzy(a *trace.Action) {
	t, f := true, false
	a.Deterministic, a.Fuzzy = &f, &t
}

// modelCost reads data.llm {model, input_tokens, output_tokens} as one
// model call.
func modelCost(data map[string]any) *trace.Cost {
	c := &trace.Cost{ModelCalls: 1}
	llm, _ := data["llm"].(map[string]any)
	c.Model, _ = llm["model"].(string)
	f := &trace.Fields{}
	c.InputTokens = f.Count(llm, "$", "input_tokens")
	c.OutputTokens = f.Count(llm, "$", "output_tokens")
	return c
}

// pick returns the members of data named by keys that are present, or nil
// when none is.
func pick(data map[string]any, keys ...string) map[string]any {
	var out map[string]any
	for _, k := range keys {
		if v, ok := data[k]; ok {
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}

// Segments is the split of a release-harness run into what can run as code
// and what a person must look at.
type Segments struct {
	// SafeToAutomate are the deterministic harness events: the release
	// analysis, the changelog audit inputs and the release steps that
	// succeeded.
	SafeToAutomate []string
	// RequiresHumanReview are the failed release steps, the deterministic
	// findings, the agent's review attempts and its recovery advice.
	RequiresHumanReview []string
	// PlainLanguage says the same in a paragraph.
	PlainLanguage string
}

// Segments splits the events in trace order. Rows of other types (tool
// observations, agent review artifacts, types this version does not know)
// are steps of the workflow but in neither list: they record how a step
// ran rather than being one of the release's own decisions.
func (rh *ReleaseHarness) Segments() Segments {
	s := Segments{SafeToAutomate: []string{}, RequiresHumanReview: []string{}}
	reruns := 0
	for i := range rh.Events {
		ev := &rh.Events[i]
		switch {
		case ev.Stream == StreamAgent && ev.Type == "agent_review_attempt":
			s.RequiresHumanReview = append(s.RequiresHumanReview,
				fmt.Sprintf("agent review attempt %s (model-authored, advisory; %s)", cmp.Or(ev.str("name"), "review"), BoundaryReleaseAudit))
		case ev.Stream == StreamAgent && ev.Type == "agent_recovery_advice":
			s.RequiresHumanReview = append(s.RequiresHumanReview,
				fmt.Sprintf("agent recovery advice for %s (advisory only; %s)", cmp.Or(ev.StepName(), "step"), BoundaryRecovery))
		case ev.Stream == StreamAgent || ev.Stream == StreamTools:
		case ev.Type == "release_analysis", ev.Type == "changelog_audit_inputs":
			s.SafeToAutomate = append(s.SafeToAutomate, ev.Type)
		case ev.Type == "deterministic_finding":
			s.RequiresHumanReview = append(s.RequiresHumanReview, "finding: "+cmp.Or(ev.str("finding"), "(no text)"))
		case ev.Type == "release_step_recorded" && ev.Failed():
			s.RequiresHumanReview = append(s.RequiresHumanReview,
				fmt.Sprintf("failed step %s (%s; recovery required before it runs again; %s)", cmp.Or(ev.StepName(), "step"), cmp.Or(ev.str("classification"), "unclassified"), BoundaryRecovery))
		case ev.Type == "release_step_recorded":
			item := "step " + cmp.Or(ev.StepName(), "step")
			if f := rerunOf(rh.failedBefore(i), ev); f != nil {
				item += fmt.Sprintf(" (re-runs failed step %s; waits for %s)", f.StepName(), BoundaryRecovery)
				reruns++
			}
			s.SafeToAutomate = append(s.SafeToAutomate, item)
		}
	}
	s.PlainLanguage = fmt.Sprintf("Safe to automate: %d deterministic harness event(s) (release analysis, changelog audit inputs, successful release steps). "+
		"Requires human review: %d item(s): agent-authored audits, agent recovery advice, deterministic findings and failed release steps. "+
		"Every agent step stays a model call behind an explicit approval boundary (%s, %s), and a failed step",
		len(s.SafeToAutomate), len(s.RequiresHumanReview), BoundaryReleaseAudit, BoundaryRecovery)
	if reruns > 0 {
		s.PlainLanguage += fmt.Sprintf(" and the %d step(s) that re-run one", reruns)
	}
	s.PlainLanguage += " runs only after a person approves it, so this candidate cannot be promoted to fully autonomous execution until the review items are resolved."
	return s
}

// failedBefore returns the failed release steps and tool observations
// before event i.
func (rh *ReleaseHarness) failedBefore(i int) []*HarnessEvent {
	var out []*HarnessEvent
	for j := range i {
		if ev := &rh.Events[j]; (ev.Type == "release_step_recorded" || ev.Type == "tool_observation") && ev.Failed() {
			out = append(out, ev)
		}
	}
	return out
}

// Recovery is how a release-harness run met its failures.
type Recovery struct {
	// ShellFailures counts the failed commands: failed release steps and
	// failed tool observations, a failure recorded in both streams (same
	// step name, or same command) counting once.
	ShellFailures int
	// RecoveryRuns counts the agent_recovery_advice events.
	RecoveryRuns int
	// FedIntoAgent is true when a recovery-advice event names a step that
	// failed: the failure's context went into a model loop.
	FedIntoAgent bool
	// FailedSteps are the names of the failed steps, in trace order.
	FailedSteps []string
	// Representation says in plain language how recovery was handled.
	Representation string
}

// Recovery summarizes the failures and the recovery advice.
func (rh *ReleaseHarness) Recovery() Recovery {
	r := Recovery{FailedSteps: []string{}}
	seen := map[string]bool{}
	failed := map[string]bool{}
	for i := range rh.Events {
		ev := &rh.Events[i]
		if ev.Stream == StreamAgent {
			if ev.Type == "agent_recovery_advice" {
				r.RecoveryRuns++
			}
			continue
		}
		if !ev.Failed() || (ev.Type != "release_step_recorded" && ev.Type != "tool_observation") {
			continue
		}
		name, cmd := ev.StepName(), ev.str("command")
		if (name != "" && seen["name\x00"+name]) || (cmd != "" && seen["cmd\x00"+cmd]) {
			continue // the same failure, mirrored in the other stream
		}
		seen["name\x00"+name] = name != ""
		seen["cmd\x00"+cmd] = cmd != ""
		r.ShellFailures++
		if name != "" && !failed[name] {
			failed[name] = true
			r.FailedSteps = append(r.FailedSteps, name)
		}
	}
	var fed []string
	for i := range rh.Events {
		ev := &rh.Events[i]
		if ev.Stream == StreamAgent && ev.Type == "agent_recovery_advice" && failed[ev.StepName()] {
			r.FedIntoAgent = true
			fed = append(fed, ev.StepName())
		}
	}
	switch {
	case r.FedIntoAgent:
		r.Representation = fmt.Sprintf("%d shell/tool failure(s) were observed (%s) and %d agent_loop recovery-advice run(s) were given the failure of %s. "+
			"The advice is advisory only: it re-ran nothing and changed nothing, and the workflow runs neither the failed step nor a re-run of it before a person approves at %s.",
			r.ShellFailures, strings.Join(r.FailedSteps, ", "), r.RecoveryRuns, strings.Join(slices.Compact(fed), ", "), BoundaryRecovery)
	case r.ShellFailures > 0 && r.RecoveryRuns > 0:
		r.Representation = fmt.Sprintf("%d shell/tool failure(s) were observed (%s) and %d recovery-advice run(s) ran, but none names a failed step, so no failure is known to have been fed into a model loop. "+
			"The workflow waits for a person at %s before running a failed step.",
			r.ShellFailures, strings.Join(r.FailedSteps, ", "), r.RecoveryRuns, BoundaryRecovery)
	case r.ShellFailures > 0:
		r.Representation = fmt.Sprintf("%d shell/tool failure(s) were observed and no agent recovery loop ran: the failure context was recorded for human review only.", r.ShellFailures)
	case r.RecoveryRuns > 0:
		r.Representation = fmt.Sprintf("No shell/tool failure was observed, but %d recovery-advice run(s) ran; their advice is advisory only.", r.RecoveryRuns)
	default:
		r.Representation = "No shell/tool failure was observed and no recovery loop ran: the release ran end to end on the deterministic path."
	}
	return r
}
