package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestWriteValidate(t *testing.T) {
	withSecret := func(s string) string {
		return strings.Replace(s, `"goal": "release package maintenance"`,
			`"goal": "release package maintenance", "api_token": "`+fakeToken+`", "note": "pushed with `+fakeToken+` today"`, 1)
	}
	tests := []struct {
		name        string
		scenario    func(t *testing.T) scenario
		kind, risk  string
		status      string
		reasons     []string
		skill       bool
		skillReject []string
	}{{
		name: "heldout passes",
		scenario: func(t *testing.T) scenario {
			s, h := releaseTraces(t, nil)
			return scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
		},
		kind: KindCandidate, risk: RiskMedium, status: StatusNeedsApproval,
		reasons: []string{ReasonApprovalRequired}, skill: true,
	}, {
		name: "no heldout",
		scenario: func(t *testing.T) scenario {
			s, _ := releaseTraces(t, nil)
			return scenario{sources: s, build: releaseCandidate, opts: opts()}
		},
		kind: KindCandidate, risk: RiskMedium, status: StatusBlocked,
		reasons: []string{ReasonHeldoutRequired}, skillReject: []string{"heldout_missing"},
	}, {
		name: "heldout drifts",
		scenario: func(t *testing.T) scenario {
			s, h := releaseTraces(t, func(s string) string {
				return strings.Replace(s, "receipt-stable-release-flow", "receipt-drifted", 1)
			})
			return scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
		},
		// Drift rejects the candidate: the bundle is of kind rejected and
		// still holds it, with where its receipts diverged.
		kind: KindRejected, risk: RiskMedium, status: StatusBlocked,
		reasons:     []string{ReasonCandidateRejected, ReasonShadowFailed, ReasonHeldoutFailed, ReasonReceiptDrift, ReasonLowConfidence},
		skillReject: []string{"candidate_rejected", "heldout_replay_failed"},
	}, {
		name: "too few examples and low confidence",
		scenario: func(t *testing.T) scenario {
			s, h := releaseTraces(t, nil)
			o := opts()
			o.MinExamples, o.MinConfidence = 5, 0.99
			return scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}
		},
		kind: KindCandidate, risk: RiskMedium, status: StatusBlocked,
		reasons: []string{ReasonInsufficientExamples, ReasonLowConfidence}, skill: true,
	}, {
		name: "secrets in a source trace",
		scenario: func(t *testing.T) scenario {
			s, h := releaseTraces(t, nil)
			s[0] = readTrace(t, "testdata/release/release_a.json", "release/release_a.json", withSecret)
			return scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
		},
		kind: KindCandidate, risk: RiskMedium, status: StatusNeedsApproval,
		reasons: []string{ReasonApprovalRequired}, skill: true,
	}, {
		name: "no candidate",
		scenario: func(t *testing.T) scenario {
			s, h := releaseTraces(t, nil)
			return scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}
		},
		kind: KindRejected, risk: RiskLow, status: StatusBlocked,
		reasons: []string{ReasonNoCandidate},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.scenario(t)
			dir, m := s.write(t)
			if m.Kind != tt.kind || m.RiskLevel != tt.risk || m.Promotion.Criteria.Status != tt.status {
				t.Errorf("kind, risk, status = %s, %s, %s; want %s, %s, %s", m.Kind, m.RiskLevel, m.Promotion.Criteria.Status, tt.kind, tt.risk, tt.status)
			}
			if diff := cmp.Diff(tt.reasons, reasonCodes(m.Promotion.Criteria.Reasons)); diff != "" {
				t.Errorf("criteria reasons (-want +got):\n%s", diff)
			}
			if v := Validate(dir); !v.OK {
				t.Errorf("Validate of a fresh bundle: %s", describe(v))
			}
			// The manifest returned is the one written.
			b, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if b.Manifest.CandidateID != m.CandidateID || b.Manifest.Workflow.SHA256 != m.Workflow.SHA256 {
				t.Errorf("Read = %+v, want the manifest Write returned", b.Manifest.Workflow)
			}
			checkSkill(t, dir, m, tt.skill, tt.skillReject)
			checkNoLeaks(t, dir)
		})
	}
}

// checkSkill checks that the skill is in the bundle exactly when it was
// accepted, and that a rejected one is in report.json with its codes.
func checkSkill(t *testing.T, dir string, m *Manifest, accepted bool, rejectCodes []string) {
	t.Helper()
	var rep struct {
		Accepted []struct {
			Name string `json:"name"`
		} `json:"skill_candidates"`
		Rejected []struct {
			Reasons []candidate.Problem `json:"rejection_reasons"`
		} `json:"rejected_skill_candidates"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ReportFile)), &rep); err != nil {
		t.Fatal(err)
	}
	skillFiles, _ := filepath.Glob(filepath.Join(dir, SkillDir, "*", SkillFile))
	if accepted {
		if m.Skill == nil || len(skillFiles) != 1 || len(rep.Accepted) != 1 || len(rep.Rejected) != 0 {
			t.Fatalf("skill %+v, files %v, report %+v; want one accepted skill", m.Skill, skillFiles, rep)
		}
		if want := "skill/" + m.Skill.Name + "/SKILL.md"; m.Skill.Path != want {
			t.Errorf("skill path %s, want %s", m.Skill.Path, want)
		}
		return
	}
	if m.Skill != nil || len(skillFiles) != 0 || len(rep.Accepted) != 0 {
		t.Errorf("skill %+v, files %v; want no skill in the bundle", m.Skill, skillFiles)
	}
	if rejectCodes == nil {
		return
	}
	if len(rep.Rejected) != 1 {
		t.Fatalf("rejected_skill_candidates = %+v, want one", rep.Rejected)
	}
	if diff := cmp.Diff(rejectCodes, codes(rep.Rejected[0].Reasons)); diff != "" {
		t.Errorf("rejected skill codes (-want +got):\n%s", diff)
	}
}

// checkNoLeaks checks that no file of the bundle holds a secret or the
// absolute paths the inputs were read from.
func checkNoLeaks(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data := mustRead(t, p)
		for _, bad := range []string{fakeToken, "/home/alice", "s3ss10n-v4lue", "dXNlcjpwYXNz"} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
		if fs := redact.Scan(data); len(fs) > 0 {
			t.Errorf("%s: redact.Scan = %v", p, fs)
		}
		return nil
	})
}

// TestValidateProblems breaks an approved bundle in one way per case and
// checks that Validate names the problem with its code and path.
func TestValidateProblems(t *testing.T) {
	s, h := releaseTraces(t, nil)
	validateProblems(t, scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()})
}

func validateProblems(t *testing.T, s scenario) {
	in := s.input(t)
	tests := []struct {
		name   string
		mutate func(t *testing.T, dir string, m *Manifest)
		code   string
		path   string
	}{{
		name: "workflow edited after approval",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, WorkflowFile)
			mustWrite(t, p, append(mustRead(t, p), "\n# edited by hand\n"...))
		},
		code: CodeApprovalStale, path: "approval_history[0]",
	}, {
		name: "fixture tampered",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, m.Fixtures[0].Path)
			mustWrite(t, p, []byte(strings.Replace(string(mustRead(t, p)), "release-branch", "main", 1)))
		},
		code: CodeFixtureHash, path: "fixtures/",
	}, {
		name: "fixture that is no trace, with a matching hash",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			data := []byte(`{"id": "t1", "actions": [`)
			mustWrite(t, filepath.Join(dir, m.Fixtures[0].Path), data)
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["fixtures"].([]any)[0].(map[string]any)["sha256"] = hexSHA(data)
			})
		},
		code: CodeFixtureInvalid, path: "fixtures/",
	}, {
		// The trace id alone does not name a fixture: the same id
		// read from another source is another trace.
		name: "fixture named by its id with another source hash",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["fixtures"].([]any)[0].(map[string]any)["source_hash"] = "sha256:" + strings.Repeat("0", 64)
			})
		},
		code: CodeFixtureInvalid, path: "fixtures/",
	}, {
		name: "token planted with a matching hash",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, m.Fixtures[1].Path)
			data := []byte(strings.Replace(string(mustRead(t, p)), `"release-branch"`, `"`+fakeToken+`"`, 1))
			mustWrite(t, p, data)
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["fixtures"].([]any)[1].(map[string]any)["sha256"] = hexSHA(data)
			})
		},
		code: CodeSecretFound, path: "fixtures/",
	}, {
		// A fixture the manifest itself calls unredacted is refused even
		// when the secret scan finds nothing in it: the scan knows only
		// some secrets, redaction removes more.
		name: "fixture declared unredacted",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["fixtures"].([]any)[1].(map[string]any)["redacted"] = false
			})
		},
		code: CodeNotRedacted, path: "$.fixtures[1].redacted",
	}, {
		name: "bundle declared unredacted",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["redaction"].(map[string]any)["applied"] = false
			})
		},
		code: CodeNotRedacted, path: "$.redaction.applied",
	}, {
		name: "symlink",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "fixtures", "link.json")); err != nil {
				t.Skip(err)
			}
		},
		code: CodeSymlink, path: "fixtures/link.json",
	}, {
		name: "path leaves the bundle",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["fixtures"].([]any)[0].(map[string]any)["path"] = "../x"
			})
		},
		code: CodePathEscape, path: "$.fixtures[0].path",
	}, {
		name: "absolute path",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["workflow"].(map[string]any)["path"] = "/etc/passwd"
			})
		},
		code: CodePathEscape, path: "$.workflow.path",
	}, {
		name: "drive path",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["eval_pack"].(map[string]any)["path"] = `C:\evil.toml`
			})
		},
		code: CodePathEscape, path: "$.eval_pack.path",
	}, {
		name: "newer schema version",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) { doc["schema_version"] = 2 })
		},
		code: CodeManifestVersion, path: "$.schema_version",
	}, {
		name: "other schema",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) { doc["schema"] = "something.else" })
		},
		code: CodeManifestSchema, path: "$.schema",
	}, {
		name: "secret as a required secret id",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) { doc["required_secrets"] = []any{"CRATES_IO_TOKEN", "crates-io-token"} })
		},
		code: CodeSecretIDInvalid, path: "$.required_secrets[1]",
	}, {
		name: "fixture missing",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			os.Remove(filepath.Join(dir, m.Fixtures[2].Path))
		},
		code: CodeFileMissing, path: "fixtures/",
	}, {
		name: "skill renamed",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, m.Skill.Path)
			mustWrite(t, p, []byte(strings.Replace(string(mustRead(t, p)), "name: \""+m.Skill.Name+"\"", "name: \"other-skill\"", 1)))
		},
		code: CodeSkillInvalid, path: "SKILL.md",
	}, {
		name: "workflow does not parse",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			mustWrite(t, filepath.Join(dir, WorkflowFile), []byte("def (:\n"))
		},
		code: CodeWorkflowInvalid, path: WorkflowFile,
	}, {
		name: "eval pack broken",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			mustWrite(t, filepath.Join(dir, EvalPackFile), []byte("version = 1\nbogus = [\n"))
		},
		code: CodeEvalPackInvalid, path: EvalPackFile,
	}, {
		// A member that decoding would take for another (another case
		// of its name) is reported where it is, line and JSON path, so
		// the reader can find it.
		name: "report member in another case",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, ReportFile)
			mustWrite(t, p, []byte(strings.Replace(string(mustRead(t, p)), `"candidates": [`, `"Candidates": [`, 1)))
		},
		code: CodeReportInvalid, path: ":$.Candidates",
	}, {
		name: "report not JSON",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			mustWrite(t, filepath.Join(dir, ReportFile), []byte("{\n"))
		},
		code: CodeReportInvalid, path: ReportFile,
	}, {
		name: "report missing",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			os.Remove(filepath.Join(dir, ReportFile))
		},
		code: CodeFileMissing, path: ReportFile,
	}, {
		name: "skill of another candidate",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				doc["skill"].(map[string]any)["workflow_candidate_id"] = "candidate_other"
			})
		},
		code: CodeSkillInvalid, path: "$.skill.workflow_candidate_id",
	}, {
		name: "status forged",
		mutate: func(t *testing.T, dir string, m *Manifest) {
			rewriteManifest(t, dir, func(doc map[string]any) {
				p := doc["promotion"].(map[string]any)
				p["approval_history"] = []any{}
				p["criteria"].(map[string]any)["status"] = "ready"
			})
		},
		code: CodeStatusInvalid, path: "$.promotion.criteria.status",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			if _, err := Write(context.Background(), dir, in, s.opts); err != nil {
				t.Fatal(err)
			}
			m, err := Approve(dir, Approval{Actor: "release-lead@example.com", At: "2026-04-27T09:00:00Z"})
			if err != nil {
				t.Fatalf("Approve: %v", err)
			}
			if v := Validate(dir); !v.OK {
				t.Fatalf("Validate before breaking: %s", describe(v))
			}
			tt.mutate(t, dir, m)
			v := Validate(dir)
			if v.OK {
				t.Fatalf("Validate = OK after %s", tt.name)
			}
			if !hasProblem(v, tt.code, tt.path) {
				t.Errorf("Validate problems lack %s at %s: %s", tt.code, tt.path, describe(v))
			}
			if len(v.Checks) != len(checkNames) {
				t.Errorf("Validate checks = %v, want one per check", v.Checks)
			}
		})
	}
}

func TestApprove(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if m.Promotion.Approver == nil || len(m.Promotion.ApprovalHistory) != 0 {
		t.Fatalf("approver %v, history %v: the expected approver must not count as an approval", m.Promotion.Approver, m.Promotion.ApprovalHistory)
	}
	for _, a := range []Approval{{At: "t"}, {Actor: "a"}} {
		if _, err := Approve(dir, a); err == nil {
			t.Errorf("Approve(%+v) = nil error, want one", a)
		}
	}
	m, err := Approve(dir, Approval{Actor: "lead", At: "2026-04-27T09:00:00Z", Reason: "looks right", Reject: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Promotion.Criteria.Status; got != StatusNeedsApproval || !slices.Equal(reasonCodes(m.Promotion.Criteria.Reasons), []string{ReasonApprovalRejected}) {
		t.Errorf("after a rejection: %s %v; want needs_approval [approval_rejected]", got, m.Promotion.Criteria.Reasons)
	}
	m, err = Approve(dir, Approval{Actor: "lead", At: "2026-04-27T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	want := []ApprovalRecord{
		{Actor: "lead", Decision: DecisionRejected, RecordedAt: "2026-04-27T09:00:00Z", Reason: "looks right", CandidateID: m.CandidateID, WorkflowSHA256: m.Workflow.SHA256},
		{Actor: "lead", Decision: DecisionApproved, RecordedAt: "2026-04-27T10:00:00Z", CandidateID: m.CandidateID, WorkflowSHA256: m.Workflow.SHA256},
	}
	if diff := cmp.Diff(want, m.Promotion.ApprovalHistory); diff != "" {
		t.Errorf("approval history (-want +got):\n%s", diff)
	}
	if m.Promotion.Criteria.Status != StatusReady || len(m.Promotion.Criteria.Reasons) != 0 {
		t.Errorf("after approval: %s %v; want ready", m.Promotion.Criteria.Status, m.Promotion.Criteria.Reasons)
	}
	// Ready has no reasons, written as an empty list: a reader of
	// candidate.json iterates reasons, and null is not a list.
	var raw struct {
		Promotion struct {
			Criteria struct {
				Reasons json.RawMessage `json:"reasons"`
			} `json:"criteria"`
		} `json:"promotion"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ManifestFile)), &raw); err != nil {
		t.Fatal(err)
	}
	if got := string(raw.Promotion.Criteria.Reasons); got != "[]" {
		t.Errorf("ready manifest: promotion.criteria.reasons %s, want []", got)
	}
	if v := Validate(dir); !v.OK {
		t.Errorf("Validate after approval: %s", describe(v))
	}

	// A blocked candidate cannot be approved.
	blocked, _ := scenario{sources: s, build: releaseCandidate, opts: opts()}.write(t)
	_, err = Approve(blocked, Approval{Actor: "lead", At: "2026-04-27T10:00:00Z"})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), ReasonHeldoutRequired) {
		t.Errorf("Approve(blocked) = %v, want ErrBlocked naming %s", err, ReasonHeldoutRequired)
	}
	// Nor one whose workflow changed since it was written.
	dir2, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	mustWrite(t, filepath.Join(dir2, WorkflowFile), append(mustRead(t, filepath.Join(dir2, WorkflowFile)), '\n'))
	if _, err := Approve(dir2, Approval{Actor: "lead", At: "x"}); err == nil {
		t.Error("Approve of an edited workflow = nil error, want one")
	}
}

// TestApproveSelf checks that the author a bundle records cannot approve
// it, in any spelling of their name, unless the caller allows it; the
// author may still reject it.
func TestApproveSelf(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if m.Promotion.Author == nil || *m.Promotion.Author != "ops@example.com" {
		t.Fatalf("author = %v, want ops@example.com", m.Promotion.Author)
	}
	for _, actor := range []string{"ops@example.com", " OPS@example.com "} {
		_, err := Approve(dir, Approval{Actor: actor, At: "2026-04-27T09:00:00Z"})
		if !errors.Is(err, ErrSelfApproval) {
			t.Errorf("Approve(actor %q) = %v, want ErrSelfApproval", actor, err)
		}
	}
	if got, err := Read(dir); err != nil || len(got.Manifest.Promotion.ApprovalHistory) != 0 {
		t.Fatalf("approval history after refused self-approvals: %v %v", got, err)
	}
	if _, err := Approve(dir, Approval{Actor: "ops@example.com", At: "2026-04-27T09:00:00Z", Reject: true, Reason: "not yet"}); err != nil {
		t.Errorf("Approve(author rejects) = %v, want nil", err)
	}
	m, err := Approve(dir, Approval{Actor: "ops@example.com", At: "2026-04-27T10:00:00Z", AllowSelfApproval: true})
	if err != nil || m.Promotion.Criteria.Status != StatusReady {
		t.Errorf("Approve(author, allowed) = %v; want ready", err)
	}
}

func TestReplayShadowEval(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	sc, err := ReplayShadow(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Matches || !sc.Pass || sc.Compared != 4 || sc.CandidateID != m.CandidateID {
		t.Errorf("ReplayShadow = matches %v pass %v compared %d %v; want a matching pass of 4", sc.Matches, sc.Pass, sc.Compared, sc.Differences)
	}
	res, err := Eval(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed || len(res.Assertions) != 1 || !res.Assertions[0].Blocking || !res.Assertions[0].Passed {
		t.Errorf("Eval = %+v, want one passing blocking assertion", res)
	}

	// A recorded result that differs is reported, not hidden.
	rewriteManifest(t, dir, func(doc map[string]any) {
		doc["shadow"].(map[string]any)["traces"].([]any)[3].(map[string]any)["status"] = "fail"
	})
	sc, err = ReplayShadow(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Matches || len(sc.Differences) != 1 {
		t.Errorf("ReplayShadow after editing the record: matches %v, differences %v; want one difference", sc.Matches, sc.Differences)
	}

	// A tampered fixture fails the blocking assertion.
	dir, m = scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	p := filepath.Join(dir, m.Fixtures[3].Path)
	mustWrite(t, p, []byte(strings.Replace(string(mustRead(t, p)), "receipt-stable-release-flow", "receipt-other", 1)))
	res, err = Eval(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Assertions[0].Passed {
		t.Errorf("Eval on a tampered fixture = %+v, want a failing blocking assertion", res)
	}
	// A rejected bundle has nothing to replay.
	dir, _ = scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}.write(t)
	if _, err := ReplayShadow(dir); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("ReplayShadow(rejected) = %v, want ErrNoCandidate", err)
	}
}

// TestWriteInterrupted fails Write at every step, on a new directory and
// over an existing bundle: no directory that validates may appear, the
// old bundle must survive intact, and no temporary directory may remain.
func TestWriteInterrupted(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	in := sc.input(t)
	b, err := build(in, sc.opts)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, f := range b.files {
		steps = append(steps, f.name)
	}
	steps = append(steps, "rename")
	errStop := errors.New("interrupted")
	for _, existing := range []bool{false, true} {
		for _, step := range steps {
			parent := t.TempDir()
			dir := filepath.Join(parent, "bundle")
			var before []byte
			if existing {
				if _, err := Write(context.Background(), dir, in, sc.opts); err != nil {
					t.Fatal(err)
				}
				before = mustRead(t, filepath.Join(dir, ManifestFile))
			}
			o := sc.opts
			o.hook = func(s string) error {
				if s == step {
					return errStop
				}
				return nil
			}
			if _, err := Write(context.Background(), dir, in, o); !errors.Is(err, errStop) {
				t.Fatalf("Write interrupted at %s = %v, want the hook's error", step, err)
			}
			ents, _ := os.ReadDir(parent)
			if existing {
				if len(ents) != 1 || string(mustRead(t, filepath.Join(dir, ManifestFile))) != string(before) {
					t.Errorf("interrupted at %s: parent holds %v; want the old bundle alone and unchanged", step, ents)
				}
				if v := Validate(dir); !v.OK {
					t.Errorf("old bundle after an interrupted replacement: %s", describe(v))
				}
				continue
			}
			if len(ents) != 0 {
				t.Errorf("interrupted at %s: parent holds %v, want nothing", step, ents)
			}
			if v := Validate(dir); v.OK {
				t.Errorf("interrupted at %s: Validate = OK", step)
			}
		}
	}
	// Even a temporary directory left by a killed process does not
	// validate: the manifest is written last.
	if b.files[len(b.files)-1].name != ManifestFile {
		t.Errorf("last file written is %s, want %s", b.files[len(b.files)-1].name, ManifestFile)
	}
}

func TestWriteTarget(t *testing.T) {
	s, h := releaseTraces(t, nil)
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.input(t)
	parent := t.TempDir()
	other := filepath.Join(parent, "other")
	os.Mkdir(other, 0o755)
	mustWrite(t, filepath.Join(other, "notes.txt"), []byte("mine"))
	if _, err := Write(context.Background(), other, in, opts()); !errors.Is(err, ErrNotBundle) {
		t.Errorf("Write over a non-bundle directory = %v, want ErrNotBundle", err)
	}
	if string(mustRead(t, filepath.Join(other, "notes.txt"))) != "mine" {
		t.Error("Write changed a directory it refused")
	}
	// A manifest whose marker is "Schema" is no bundle's, though
	// encoding/json would read it as "schema".
	mustWrite(t, filepath.Join(other, ManifestFile), []byte(`{"Schema": "`+Schema+`"}`))
	if _, err := Write(context.Background(), other, in, opts()); !errors.Is(err, ErrNotBundle) {
		t.Errorf("Write over a directory whose manifest says \"Schema\" = %v, want ErrNotBundle", err)
	}
	if string(mustRead(t, filepath.Join(other, "notes.txt"))) != "mine" {
		t.Error("Write changed a directory it refused")
	}
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Write(context.Background(), empty, in, opts()); err != nil {
		t.Errorf("Write into an empty directory: %v", err)
	}
	// Rewriting a bundle replaces it, and the output is deterministic.
	first := mustRead(t, filepath.Join(empty, ManifestFile))
	if _, err := Write(context.Background(), empty, in, opts()); err != nil {
		t.Fatalf("Write over a bundle: %v", err)
	}
	if diff := cmp.Diff(string(first), string(mustRead(t, filepath.Join(empty, ManifestFile)))); diff != "" {
		t.Errorf("second Write differs (-first +second):\n%s", diff)
	}
	if _, err := Write(context.Background(), filepath.Join(parent, "x"), Input{}, opts()); err == nil {
		t.Error("Write without a report = nil error")
	}
	in2 := in
	in2.Sources = in.Sources[:1]
	if _, err := Write(context.Background(), filepath.Join(parent, "y"), in2, opts()); err == nil || !strings.Contains(err.Error(), "not among the source traces") {
		t.Errorf("Write with an example missing = %v, want an error naming it", err)
	}
}

func TestManifestFields(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if m.ExternalKey != "release-package-maintenance" || m.Title != "release_package_maintenance (3 steps)" {
		t.Errorf("external key %q, title %q", m.ExternalKey, m.Title)
	}
	if m.Repo != nil || m.Team != nil || m.Generator.Tool != "crystallize" || m.Workflow.PackageVersion != DefaultPackageVersion {
		t.Errorf("repo %v, team %v, generator %+v, package version %q", m.Repo, m.Team, m.Generator, m.Workflow.PackageVersion)
	}
	if m.EvalPack.Path == nil || *m.EvalPack.Path != EvalPackFile || m.EvalPack.Link != nil {
		t.Errorf("eval_pack = %+v", m.EvalPack)
	}
	var roles []string
	for _, st := range m.SourceTraces {
		roles = append(roles, st.Role)
		if st.SourceURL != nil && (strings.HasPrefix(*st.SourceURL, "/") || strings.Contains(*st.SourceURL, "alice")) {
			t.Errorf("source_url %q is a local path", *st.SourceURL)
		}
	}
	if diff := cmp.Diff([]string{"source", "source", "source", "heldout"}, roles); diff != "" {
		t.Errorf("source trace roles (-want +got):\n%s", diff)
	}
	for _, f := range m.Fixtures {
		if !f.Redacted || f.SHA256 != hexSHA(mustRead(t, filepath.Join(dir, f.Path))) {
			t.Errorf("fixture %+v: not redacted or hash differs", f)
		}
	}
	// Every field of the published manifest is present, with its JSON name.
	var doc map[string]any
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, ManifestFile)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "schema_version", "generated_at", "generator", "kind", "candidate_id", "external_key", "title", "team", "repo", "risk_level", "workflow", "source_trace_hashes", "source_traces", "deterministic_steps", "fuzzy_steps", "side_effects", "capabilities", "required_secrets", "savings", "shadow", "eval_pack", "skill", "fixtures", "promotion", "redaction", "confidence", "rejection_reasons", "warnings"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("candidate.json lacks %s", k)
		}
	}
	promo := doc["promotion"].(map[string]any)
	for _, k := range []string{"owner", "approver", "author", "rollout_policy", "rollback_target", "created_at", "workflow_version", "package_name", "sample_count", "confidence", "shadow_success_count", "shadow_failure_count", "divergence_history", "approval_history", "criteria", "estimated_time_token_savings"} {
		if _, ok := promo[k]; !ok {
			t.Errorf("promotion lacks %s", k)
		}
	}
}

func TestKindRisk(t *testing.T) {
	se := func(kind, target, capability string) trace.SideEffect {
		return trace.SideEffect{Kind: kind, Target: target, Capability: capability}
	}
	tests := []struct {
		name       string
		c          *candidate.Candidate
		kind, risk string
	}{
		{"none", nil, KindRejected, RiskLow},
		{"rejected", &candidate.Candidate{RejectionReasons: []candidate.Problem{{Code: "x"}}}, KindRejected, RiskLow},
		{"read only", &candidate.Candidate{}, KindPlanOnly, RiskLow},
		{"receipts", &candidate.Candidate{SideEffects: []trace.SideEffect{se("receipt_write", "tenant_event_log", "receipt.write"), se("plan", "stash", "")}}, KindPlanOnly, RiskLow},
		{"event log target", &candidate.Candidate{SideEffects: []trace.SideEffect{se("append", "tenant_event_log", "")}}, KindPlanOnly, RiskLow},
		{"git write", &candidate.Candidate{SideEffects: []trace.SideEffect{se("git_ref", "b", "git.write")}}, KindCandidate, RiskMedium},
		// A write is a write in any case its tool spells it.
		{"publish in capitals and secrets", &candidate.Candidate{RequiredSecrets: []string{"REGISTRY_TOKEN"}, SideEffects: []trace.SideEffect{se("http", "registry", "Registry.PUBLISH")}}, KindCandidate, RiskHigh},
		{"write and secrets", &candidate.Candidate{RequiredSecrets: []string{"CRATES_IO_TOKEN"}, SideEffects: []trace.SideEffect{se("package", "crates.io", "cargo.publish")}}, KindCandidate, RiskHigh},
		{"write and fuzzy", &candidate.Candidate{Steps: []candidate.Step{{Segment: candidate.Fuzzy}}, SideEffects: []trace.SideEffect{se("file_write", "a", "fs.write")}}, KindCandidate, RiskHigh},
		{"read and secrets", &candidate.Candidate{RequiredSecrets: []string{"API_KEY"}, SideEffects: []trace.SideEffect{se("http", "api", "net.read")}}, KindCandidate, RiskMedium},
	}
	for _, tt := range tests {
		k := kindOf(tt.c)
		if r := riskOf(tt.c, k); k != tt.kind || r != tt.risk {
			t.Errorf("%s: kind, risk = %s, %s; want %s, %s", tt.name, k, r, tt.kind, tt.risk)
		}
	}
}

func TestLocalPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mine/release_0.json", "mine/release_0.json"},
		{"runs\\a.json", "runs/a.json"},
		{"/home/alice/runs/a.json", "a.json"},
		{"C:\\Users\\alice\\a.json", "a.json"},
		{"\\\\server\\share\\a.json", "a.json"},
		{"~/runs/a.json", "a.json"},
		{"file:///home/alice/a.json", "a.json"},
		{"/", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := localPath(tt.in); got != tt.want {
			t.Errorf("localPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReadRefuses(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"schema", `{"schema": "x", "schema_version": 1}`, `$.schema: schema "x"`},
		{"no schema", `{"schema_version": 1}`, "$.schema: missing"},
		{"newer", `{"schema": "` + Schema + `", "schema_version": 2}`, "$.schema_version: schema_version 2 is newer"},
		{"zero", `{"schema": "` + Schema + `", "schema_version": 0}`, "$.schema_version: schema_version 0 is not a version"},
		{"type", `{"schema": "` + Schema + `", "schema_version": 1, "kind": 3}`, "$.kind: expected string"},
		{"json", `{`, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, ManifestFile), []byte(tt.doc))
			_, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), ManifestFile) {
				t.Errorf("Read = %v, want an error naming %s and %q", err, ManifestFile, tt.want)
			}
		})
	}
}

// TestPromoteReport checks that every candidate of the bundle's
// report.json carries its promotion, and that the bundle's candidate
// there says what the manifest says.
func TestPromoteReport(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	dir, m := sc.write(t)
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep candidate.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(rep.Candidates), rep.RejectedCandidates...)
	if len(all) == 0 {
		t.Fatal("report.json has no candidate")
	}
	for _, c := range all {
		if c.Promotion == nil {
			t.Fatalf("candidate %s has no promotion in report.json", c.ID)
		}
	}
	p := rep.Candidates[0].Promotion
	if p.Status != m.Promotion.Criteria.Status || !slices.Equal(reasonCodes(p.Reasons), reasonCodes(m.Promotion.Criteria.Reasons)) ||
		p.SampleCount != m.Promotion.SampleCount || len(p.ApprovalHistory) != 0 || p.Criteria.MinConfidence != m.Promotion.Criteria.MinConfidence {
		t.Errorf("report promotion = %+v, manifest promotion = %+v; want the same verdict", p, m.Promotion)
	}
}

// TestBundleShadowNotListed writes the bundle of a candidate whose shadow
// report lists one of its three passing source examples and counts the
// other two: the manifest's counts, the skill's gate and a shadow replay
// of the bundle (which lists all three) count them all, and the bundle
// validates.
func TestBundleShadowNotListed(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts(), shadow: replay.Options{ListPassing: 1}}.write(t)
	if m.Shadow.PassedNotListed != 2 || len(m.Shadow.Traces) != 2 || m.Shadow.ComparedTraces != 4 || !m.Shadow.Pass {
		t.Fatalf("shadow: %d listed, %d not listed, %d compared, pass %v; want 2, 2, 4, true", len(m.Shadow.Traces), m.Shadow.PassedNotListed, m.Shadow.ComparedTraces, m.Shadow.Pass)
	}
	if p := m.Promotion; p.ShadowSuccessCount != 4 || p.ShadowFailureCount != 0 {
		t.Errorf("promotion counts %d passed, %d failed; want 4 and 0", p.ShadowSuccessCount, p.ShadowFailureCount)
	}
	if m.Skill == nil {
		t.Fatal("no skill: the gate refused a candidate whose every trace passed")
	}
	var g skill.Gate
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, m.Skill.GateReceiptPath)), &g); err != nil {
		t.Fatal(err)
	}
	if g.SourceReplay != (skill.GateReplay{Compared: 3, Passed: 3, PassedNotListed: 2}) || len(g.ComparedTraces) != 2 || !g.Accepted() {
		t.Errorf("gate source replay %+v with %d traces listed, accepted %v; want 3 compared, 3 passed, 2 not listed, 2 listed, accepted", g.SourceReplay, len(g.ComparedTraces), g.Accepted())
	}
	sc, err := ReplayShadow(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Matches || sc.Compared != 4 {
		t.Errorf("ReplayShadow: matches %v, compared %d, differences %v; want a match of 4", sc.Matches, sc.Compared, sc.Differences)
	}
	if v := Validate(dir); !v.OK {
		t.Errorf("Validate: %s", describe(v))
	}
	// A recorded count that differs is a difference.
	rewriteManifest(t, dir, func(doc map[string]any) {
		doc["shadow"].(map[string]any)["passed_not_listed"] = 1
	})
	if sc, err := ReplayShadow(dir); err != nil || sc.Matches {
		t.Errorf("ReplayShadow after editing the count: %v, %v; want a difference", err, sc)
	}
}

// TestValidateReportsSchemaRead checks that Validate reports the schema
// marker and version candidate.json holds, not the ones this build
// expects: a reader of a refused manifest sees what it says.
func TestValidateReportsSchemaRead(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if v := Validate(dir); v.Schema != Schema || v.SchemaVersion != "1" {
		t.Fatalf("Validate of a fresh bundle read schema %q version %q, want %q 1", v.Schema, v.SchemaVersion, Schema)
	}
	rewriteManifest(t, dir, func(doc map[string]any) {
		doc["schema"] = "something.else"
		doc["schema_version"] = 7
	})
	v := Validate(dir)
	if v.Schema != "something.else" || v.SchemaVersion != "7" {
		t.Errorf("Validate read schema %q version %q, want the manifest's something.else 7", v.Schema, v.SchemaVersion)
	}
}

// TestApproveRecordFails checks that a decision the approval ledger could
// not record is an error of Approve, returned with the manifest that holds
// it: the caller must learn that the ledger and approval_history now
// differ, instead of taking the decision as fully recorded.
func TestApproveRecordFails(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	ledgerFull := errors.New("ledger is full")
	var recorded []ApprovalRecord
	m, err := Approve(dir, Approval{Actor: "lead", At: "2026-04-27T09:00:00Z", Record: func(r ApprovalRecord) error {
		recorded = append(recorded, r)
		return ledgerFull
	}})
	if !errors.Is(err, ledgerFull) {
		t.Errorf("Approve with a failing ledger = %v, want %v", err, ledgerFull)
	}
	if m == nil || len(m.Promotion.ApprovalHistory) != 1 || len(recorded) != 1 || recorded[0] != m.Promotion.ApprovalHistory[0] {
		t.Errorf("manifest %v, recorded %+v; want the manifest holding the one decision the ledger was given", m, recorded)
	}
}

// TestShadowHeldout checks held-out evidence brought to a bundle from
// outside: a run of the procedure passes and is listed; no held-out run is
// no pass, since nothing was shown; and a run that is one of the bundle's
// own source examples is refused, since a run is not its own evidence.
func TestShadowHeldout(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	hc, err := ShadowHeldout(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []HeldoutTrace{{TraceID: h[0].ID, Status: candidate.StatusPass}}
	if diff := cmp.Diff(want, hc.Heldout); diff != "" || !hc.Pass || hc.CandidateID != m.CandidateID {
		t.Errorf("ShadowHeldout: pass %v, candidate %s, held-out (-want +got):\n%s", hc.Pass, hc.CandidateID, diff)
	}
	hc, err = ShadowHeldout(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hc.Pass || len(hc.Heldout) != 0 {
		t.Errorf("ShadowHeldout without held-out traces: pass %v, held-out %+v; want no pass", hc.Pass, hc.Heldout)
	}
	if _, err := ShadowHeldout(dir, s[:1]); err == nil || !strings.Contains(err.Error(), "cannot be its own held-out evidence") {
		t.Errorf("ShadowHeldout(a source example) = %v, want a refusal", err)
	}
}

// TestEvalPackUnreadable checks that an eval pack the manifest lists but
// the bundle lacks is an error of Eval, not an evaluation that passes
// because it checked nothing.
func TestEvalPackUnreadable(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if m.EvalPack.Path == nil {
		t.Fatal("the bundle has no eval pack")
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(*m.EvalPack.Path))); err != nil {
		t.Fatal(err)
	}
	if res, err := Eval(dir); err == nil {
		t.Errorf("Eval without its eval pack = %+v, nil error; want an error", res)
	}
}

// TestManifestStepSegments checks that candidate.json sorts every step
// into deterministic_steps or fuzzy_steps by its segment, a fuzzy step
// with its review notes: the reviewer reads there which steps still ask a
// model, so none may be missing or misfiled.
func TestManifestStepSegments(t *testing.T) {
	s, h := releaseTraces(t, nil)
	fuzzy := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Steps[1].Segment = candidate.Fuzzy
		c.Steps[1].ReviewNotes = []string{"the manifest edit depends on a model"}
		return c
	}
	for _, tt := range []struct {
		name          string
		build         func([]*trace.Trace) candidate.Candidate
		det, fuzzy    []int
		fuzzyHasNotes bool
	}{
		{"all deterministic", releaseCandidate, []int{1, 2, 3}, nil, false},
		{"one fuzzy step", fuzzy, []int{1, 3}, []int{2}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, m := scenario{sources: s, heldout: h, build: tt.build, opts: opts()}.write(t)
			indexes := func(refs []StepRef) []int {
				var out []int
				for _, r := range refs {
					out = append(out, r.Index)
				}
				return out
			}
			if diff := cmp.Diff(tt.det, indexes(m.DeterministicSteps)); diff != "" {
				t.Errorf("deterministic_steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.fuzzy, indexes(m.FuzzySteps)); diff != "" {
				t.Errorf("fuzzy_steps (-want +got):\n%s", diff)
			}
			if tt.fuzzyHasNotes && (len(m.FuzzySteps) != 1 || len(m.FuzzySteps[0].ReviewNotes) != 1) {
				t.Errorf("fuzzy_steps %+v, want the step's review notes", m.FuzzySteps)
			}
		})
	}
}

// TestValidateNoManifest checks that a directory without candidate.json
// is no valid bundle, whatever else it holds.
func TestValidateNoManifest(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, WorkflowFile), []byte("def main(ctx):\n    pass\n"))
	if v := Validate(dir); v.OK || len(v.Problems) == 0 {
		t.Errorf("Validate(a directory without a manifest) = OK %v, problems %v; want not OK", v.OK, v.Problems)
	}
}

// TestExampleActions checks that a bundle gives, for each example whose
// trace it holds, the actions its steps matched, in step order: what the
// agent did on the procedure in that session, which run statistics
// compare a run with.
func TestExampleActions(t *testing.T) {
	s, h := releaseTraces(t, nil)
	// Each example names the actions its steps matched: the trace's
	// actions after the first, as the release traces hold them; one
	// names an action its trace lacks, and is left out.
	withIDs := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		for e, tr := range examples {
			for _, a := range tr.Actions[len(tr.Actions)-len(c.Steps):] {
				c.Examples[e].ActionIDs = append(c.Examples[e].ActionIDs, a.ID)
			}
		}
		c.Examples[1].ActionIDs[len(c.Steps)-1] = "missing"
		return c
	}
	dir, _ := scenario{sources: s, heldout: h, build: withIDs, opts: opts()}.write(t)
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Candidate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.ExampleActions()
	if err != nil {
		t.Fatal(err)
	}
	var want, ids [][]string
	for e, ex := range c.Examples {
		if e != 1 {
			want = append(want, ex.ActionIDs)
		}
	}
	for _, acts := range got {
		var l []string
		for _, a := range acts {
			l = append(l, a.ID)
		}
		ids = append(ids, l)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ExampleActions ids (-want +got):\n%s", diff)
	}
}

// TestApproveUnreadableBundle: a decision on a bundle whose manifest
// cannot be read is refused with the reader's error, and writes nothing;
// recording it would approve what nobody can review.
func TestApproveUnreadableBundle(t *testing.T) {
	dir := t.TempDir()
	bad := []byte(`{"schema": "not a manifest"`)
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Approve(dir, Approval{Actor: "lead", At: "2026-04-27T09:00:00Z"})
	if err == nil || m != nil {
		t.Fatalf("Approve(unreadable manifest) = %v, %v; want an error", m, err)
	}
	got, rerr := os.ReadFile(filepath.Join(dir, ManifestFile))
	if rerr != nil || string(got) != string(bad) {
		t.Errorf("the manifest changed: %q, %v", got, rerr)
	}
}

// TestRedactTraceMalformed: a trace that is not JSON is an error, never
// an empty document written in its place.
func TestRedactTraceMalformed(t *testing.T) {
	for _, how := range []TraceRedaction{ForReplay, ForSharing} {
		if out, _, err := RedactTrace([]byte(`{"id": "t1", "actions": [`), how); err == nil {
			t.Errorf("RedactTrace(malformed, %v) = %q, nil; want an error", how, out)
		}
	}
}

// TestRedactTraceForSharing: a trace shared with others loses the names
// of the users whose home directories it holds wherever they stand; one
// kept for replay on the same machine writes only the home directories
// as ~, so that its other values replay as they ran.
func TestRedactTraceForSharing(t *testing.T) {
	raw := []byte(`{"id":"t1","actions":[{"kind":"tool_call","name":"git commit","parameters":{"path":"/home/alice/src/app","author":"alice"}}]}`)
	for how, want := range map[TraceRedaction]string{ForReplay: `"author":"alice"`, ForSharing: `"author":"~"`} {
		indented, _, err := RedactTrace(raw, how)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, indented); err != nil {
			t.Fatal(err)
		}
		if out := compact.String(); !strings.Contains(out, want) || !strings.Contains(out, `"path":"~/src/app"`) {
			t.Errorf("RedactTrace(%v) = %s; want %s and the home written ~", how, compact.String(), want)
		}
	}
}

// TestDiffShadowNothingRecorded: a replay matches the manifest only when
// the manifest records what it matched; with no shadow report recorded,
// there is a difference to show, not a silent match.
func TestDiffShadowNothingRecorded(t *testing.T) {
	d := diffShadow(nil, &candidate.ShadowReport{Pass: true, ComparedTraces: 3})
	if len(d) != 1 || !strings.Contains(d[0], "no shadow report") {
		t.Errorf("diffShadow(nil, …) = %q, want the one difference that nothing was recorded", d)
	}
}

// TestSettleCriteriaApprovalReasons: the reasons an earlier settling
// added for the approval state are its own, recomputed from the latest
// decision; only the other reasons block. An approval therefore makes a
// bundle whose only reason was approval_required (or approval_rejected)
// ready, and leaves one blocked by anything else blocked.
func TestSettleCriteriaApprovalReasons(t *testing.T) {
	for _, tt := range []struct {
		reasons    []string
		decision   string
		wantStatus string
		wantCodes  []string
	}{
		{[]string{ReasonApprovalRequired}, DecisionApproved, StatusReady, nil},
		{[]string{ReasonApprovalRejected}, DecisionApproved, StatusReady, nil},
		{[]string{ReasonApprovalRequired}, DecisionRejected, StatusNeedsApproval, []string{ReasonApprovalRejected}},
		{[]string{ReasonApprovalRejected}, "", StatusNeedsApproval, []string{ReasonApprovalRequired}},
		{[]string{ReasonApprovalRequired, ReasonLowConfidence}, DecisionApproved, StatusBlocked, []string{ReasonLowConfidence}},
	} {
		cr := Criteria{}
		for _, c := range tt.reasons {
			cr.Reasons = append(cr.Reasons, Reason{Code: c})
		}
		settleCriteria(&cr, tt.decision)
		var codes []string
		for _, r := range cr.Reasons {
			codes = append(codes, r.Code)
		}
		if cr.Status != tt.wantStatus || !slices.Equal(codes, tt.wantCodes) {
			t.Errorf("settle(%v, %q) = %s %v, want %s %v", tt.reasons, tt.decision, cr.Status, codes, tt.wantStatus, tt.wantCodes)
		}
	}
}
