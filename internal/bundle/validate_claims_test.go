package bundle

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// editReport applies edit to the generic report.json of dir.
func editReport(t *testing.T, dir string, edit func(r map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, ReportFile)
	v, err := decodeGeneric(mustRead(t, p))
	if err != nil {
		t.Fatal(err)
	}
	edit(v.(map[string]any))
	out, err := candidate.EncodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, out)
}

// editFile replaces old with new in the bundle file p, which must hold it.
func editFile(t *testing.T, dir, p, old, new string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	data := string(mustRead(t, full))
	if !strings.Contains(data, old) {
		t.Fatalf("%s does not hold %q", p, old)
	}
	mustWrite(t, full, []byte(strings.ReplaceAll(data, old, new)))
}

// TestValidateChecksEveryClaim breaks, one claim at a time, what an
// approved bundle says about itself, and checks that Validate refuses it
// with the problem's code at the place of the false claim. Each is a
// claim a reviewer relies on without checking it by hand.
func TestValidateChecksEveryClaim(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	in := sc.input(t)
	manifest := func(edit func(g map[string]any)) func(*testing.T, string, *Manifest) {
		return func(t *testing.T, dir string, _ *Manifest) { rewriteManifest(t, dir, edit) }
	}
	report := func(edit func(r map[string]any)) func(*testing.T, string, *Manifest) {
		return func(t *testing.T, dir string, _ *Manifest) { editReport(t, dir, edit) }
	}
	fixture := func(g map[string]any, i int) map[string]any { return g["fixtures"].([]any)[i].(map[string]any) }
	firstCandidate := func(r map[string]any) map[string]any { return r["candidates"].([]any)[0].(map[string]any) }
	tests := []struct {
		name    string
		breakIt func(t *testing.T, dir string, m *Manifest)
		code    string
		path    string
		msg     string
	}{
		{"unknown kind", manifest(func(g map[string]any) { g["kind"] = "tool" }),
			CodeManifestInvalid, "$.kind", `kind "tool"`},
		{"no candidate id", manifest(func(g map[string]any) { g["candidate_id"] = "" }),
			CodeManifestInvalid, "$.candidate_id", "needs a candidate_id"},
		{"unknown status", manifest(func(g map[string]any) {
			g["promotion"].(map[string]any)["criteria"].(map[string]any)["status"] = "approved"
		}), CodeManifestInvalid, "$.promotion.criteria.status", `status "approved"`},
		{"secret value as required secret", manifest(func(g map[string]any) { g["required_secrets"] = []any{fakeToken} }),
			CodeSecretIDInvalid, "$.required_secrets[0]", "secret value"},
		{"workflow sha256 changed", manifest(func(g map[string]any) {
			g["workflow"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
		}), CodeWorkflowHash, WorkflowFile, "differs from the manifest's"},
		{"workflow function renamed", manifest(func(g map[string]any) { g["workflow"].(map[string]any)["name"] = "other_name" }),
			CodeWorkflowInvalid, WorkflowFile, ""},
		{"absolute workflow path in report", report(func(r map[string]any) { r["workflow_path"] = "/srv/out/workflow.star" }),
			CodeAbsolutePath, "$.workflow_path", ""},
		{"absolute shadow source in report", report(func(r map[string]any) { r["shadow_sources"] = []any{"held", `C:\held`} }),
			CodeAbsolutePath, "$.shadow_sources[1]", ""},
		{"absolute skipped file in report", report(func(r map[string]any) {
			r["skipped_files"] = []any{map[string]any{"path": "~/runs/x.json", "errors": []any{}}}
		}), CodeAbsolutePath, "$.skipped_files[0].path", ""},
		{"absolute excluded trace in report", report(func(r map[string]any) {
			r["excluded_traces"] = []any{map[string]any{"trace_id": "t", "source": "file:///runs/t.json", "code": "c", "message": "m"}}
		}), CodeAbsolutePath, "$.excluded_traces[0].source", ""},
		{"absolute example source in report", report(func(r map[string]any) {
			firstCandidate(r)["examples"].([]any)[2].(map[string]any)["source"] = "/runs/c.json"
		}), CodeAbsolutePath, "$.candidates[0].examples[2].source", ""},
		{"absolute rejected example source in report", report(func(r map[string]any) {
			c := map[string]any{}
			for k, v := range firstCandidate(r) {
				c[k] = v
			}
			c["id"] = "candidate_other"
			c["examples"] = []any{map[string]any{"trace_id": "t", "source": `\\host\runs\t.json`, "source_hash": "h", "action_ids": []any{}}}
			r["rejected_candidates"] = []any{c}
		}), CodeAbsolutePath, "$.rejected_candidates[0].examples[0].source", ""},
		{"eval pack of another candidate", func(t *testing.T, dir string, m *Manifest) {
			editFile(t, dir, EvalPackFile, `candidate_id = "`+m.CandidateID+`"`, `candidate_id = "candidate_other"`)
		}, CodeEvalPackInvalid, "$.metadata.candidate_id", "candidate_other"},
		{"eval pack fixture not the bundle's", func(t *testing.T, dir string, m *Manifest) {
			editFile(t, dir, EvalPackFile, `path = "`+m.Fixtures[3].Path+`"`, `path = "fixtures/elsewhere.json"`)
		}, CodeEvalPackInvalid, "$.fixtures[3].path", "fixtures/elsewhere.json"},
		{"skill path not under its name", manifest(func(g map[string]any) {
			g["skill"].(map[string]any)["name"] = "other-skill"
		}), CodeSkillInvalid, "$.skill.path", "other-skill"},
		{"gate of another skill", func(t *testing.T, dir string, m *Manifest) {
			editFile(t, dir, m.Skill.GateReceiptPath, m.Skill.SkillCandidateID, "skill_other")
		}, CodeSkillInvalid, "$.skill_id", "skill_other"},
		{"gate of another candidate", func(t *testing.T, dir string, m *Manifest) {
			editFile(t, dir, m.Skill.GateReceiptPath, `"workflow_candidate_id": "`+m.CandidateID+`"`, `"workflow_candidate_id": "candidate_other"`)
		}, CodeSkillInvalid, "$.workflow_candidate_id", "candidate_other"},
		{"fixture listed twice", manifest(func(g map[string]any) {
			fs := g["fixtures"].([]any)
			g["fixtures"] = append(fs, fs[0])
		}), CodeManifestInvalid, "$.fixtures[4].path", "listed twice"},
		{"fixture of no role", manifest(func(g map[string]any) { fixture(g, 0)["role"] = "training" }),
			CodeFixtureInvalid, "$.fixtures[0].role", `role "training"`},
		{"source trace not a fixture", manifest(func(g map[string]any) {
			g["source_traces"].([]any)[1].(map[string]any)["fixture_path"] = "fixtures/none.json"
		}), CodeFileMissing, "$.source_traces[1].fixture_path", "not a fixture"},
		{"source url an absolute path", manifest(func(g map[string]any) {
			g["source_traces"].([]any)[0].(map[string]any)["source_url"] = "/runs/a.json"
		}), CodeAbsolutePath, "$.source_traces[0].source_url", ""},
		{"approval of another candidate", manifest(func(g map[string]any) {
			h := g["promotion"].(map[string]any)["approval_history"].([]any)
			h[0].(map[string]any)["candidate_id"] = "candidate_other"
		}), CodeApprovalStale, "$.promotion.approval_history[0]", "candidate_other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			if _, err := Write(context.Background(), dir, in, sc.opts); err != nil {
				t.Fatal(err)
			}
			m, err := Approve(dir, Approval{Actor: "release-lead@example.com", At: "2026-04-27T09:00:00Z"})
			if err != nil {
				t.Fatal(err)
			}
			if v := Validate(dir); !v.OK {
				t.Fatalf("Validate before breaking:\n%s", describe(v))
			}
			tt.breakIt(t, dir, m)
			v := Validate(dir)
			if v.OK || Ready(dir).OK() {
				t.Errorf("a bundle with %s is valid or ready", tt.name)
			}
			found := false
			for _, p := range v.Problems {
				found = found || p.Code == tt.code && strings.HasSuffix(p.Path, tt.path) && strings.Contains(p.Message, tt.msg)
			}
			if !found {
				t.Errorf("no %s problem at ...%s saying %q:\n%s", tt.code, tt.path, tt.msg, describe(v))
			}
		})
	}
}
