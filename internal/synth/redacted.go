package synth

import "github.com/crystallize-dev/crystallize/internal/redact"

// Redacted returns a copy of r fit to print. What a capsule returns is
// computed from the experiment's data, which may be any file the
// experiment is allowed to read: every string it or a check produced
// (metric names and values, the values and reasons of checks, the
// results of verifiers, the message that stopped a capsule) goes
// through the redactor, as the evidence bundle does, and so do the
// claim's text and the names of files. r is not changed; the evidence is
// written from r, whose digests are of what ran.
func (r *Report) Redacted() *Report {
	out := *r
	out.Claim.Text = redactedText(r.Claim.Text)
	out.Conditions = make([]*Condition, len(r.Conditions))
	for i, c := range r.Conditions {
		cc := *c
		cc.Name, cc.File = redactedText(c.Name), redactedText(c.File)
		if c.Metrics != nil {
			cc.Keys = make([]string, len(c.Keys))
			for j, k := range c.Keys {
				cc.Keys[j] = redactedText(k)
			}
			cc.Metrics = make(Samples, len(c.Metrics))
			for k, vs := range c.Metrics {
				cc.Metrics[redactedText(k)] = samples(k, vs)
			}
		}
		out.Conditions[i] = &cc
	}
	out.Checks = make([]Check, len(r.Checks))
	for i, ch := range r.Checks {
		ch.Condition, ch.Metric, ch.Reason = redactedText(ch.Condition), redactedText(ch.Metric), redactedText(ch.Reason)
		ch.Original, ch.Observed = redactedValue(ch.Original), redactedValue(ch.Observed)
		out.Checks[i] = ch
	}
	if r.Hypotheses != nil {
		out.Hypotheses = make([]Verdict, len(r.Hypotheses))
		for i, h := range r.Hypotheses {
			if h.Result != nil {
				h.Result = redactedValue(h.Result).(map[string]any)
			}
			out.Hypotheses[i] = h
		}
	}
	if r.Stopped != nil {
		s := *r.Stopped
		s.Capsule, s.Msg = redactedText(s.Capsule), redactedText(s.Msg)
		out.Stopped = &s
	}
	return &out
}

// samples redacts the values of the metric named key: all of them when
// the name is sensitive (a metric called "password"), as a JSON member.
func samples(key string, vs []any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if redact.SensitiveKey(key) {
			out[i] = redact.Redacted
			continue
		}
		out[i] = redactedValue(v)
	}
	return out
}

// redactedText is s with its secrets and home directories redacted.
func redactedText(s string) string {
	s, _ = redact.Text(s)
	return s
}

// redactedValue is v with its secrets and home directories redacted.
func redactedValue(v any) any {
	v, _ = redact.Value(v)
	v, _ = redact.Homes(v)
	return v
}
