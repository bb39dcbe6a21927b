// Package redact finds credentials in trace content and removes them, so
// that nothing that leaves the machine (bundle fixtures, reports, shared
// traces) carries a private payload, and so that validate can check a bundle
// by reading its content instead of trusting a "redacted" flag.
//
// The main invariant: redaction is a fixed point. For every document d that
// Bytes accepts, Bytes(Bytes(d)) equals Bytes(d) with no replacement, and no
// string in the output (value or key) is flagged by Secret. The fuzz tests
// check both.
//
// # Detection
//
// Secret and Scan share one scanner (scanner.go) that makes a single pass
// over the text and reports non-overlapping matches, each the byte span of
// the secret itself (the token after "Bearer ", the value after
// "password="), never its context. Three kinds of evidence are used:
//
//   - Family prefixes (ghp_, xoxb-, AKIA, sk-ant-, eyJ…, -----BEGIN …) are
//     checked at word starts and after an underscore whose next byte can
//     begin a prefix, so the common byte costs one table lookup; names
//     built from tool calls and goals (curl_xoxb-…, deploy_ghp_…) hold
//     tokens there. The prefixes distinctive enough not to occur in words
//     or encodings (gh?_, github_pat_, glpat-, xox?-, sk-ant-, Stripe's)
//     are also checked inside a word. Each family then checks its own body
//     (alphabet and minimum length) by hand; there is no regexp on the hot
//     path.
//     Vendor formats whose body is hex or otherwise unremarkable
//     (DigitalOcean dop_v1_, Shopify shpat_, Databricks dapi, Twilio SK,
//     and the others of family.go) are a table of prefixes, each with its
//     body's alphabet and length, checked at word starts only.
//   - URL userinfo: at "://", the password of user:password@host, unless
//     it is a reference such as ${TOKEN}.
//   - Command lines (cmdline.go): the password of -u/--user user:password,
//     of an attached -pPASSWORD, the value of --NAME VALUE for a sensitive
//     NAME, and a netrc entry's password after its login.
//     JoinOptionValues puts an option and its credential in one word for
//     callers that split command lines into arguments.
//   - Assignments: at every ':' or '=' the identifier before it is looked
//     up with the same rules as SensitiveKey (plus access_key), and the value
//     after it is taken if it does not look like prose, a placeholder or a
//     variable reference. This also catches "password": "…" inside raw JSON.
//   - The long-credential heuristic (entropy.go) runs only on maximal runs
//     of at least 32 bytes from [A-Za-z0-9+/_=-], which are rare in trace
//     text, so its cost (a byte histogram and a few logarithms) is paid
//     rarely. Runs of 16 bytes or more are also decoded as base64 of
//     user:password (HTTP Basic, a docker config's "auth"), stopping at
//     the first byte that cannot be in one.
//
// Detection is tuned for precision on what traces contain (versions,
// digests, UUIDs, paths, identifiers) over recall on exotic credentials; the
// labeled corpus in testdata/corpus.txt pins the trade-off, and its test
// reports precision and recall. testdata/external.txt measures recall on
// cases written from a public secret scanner's rules and tests instead of
// from this package's.
//
// # Redaction
//
// Value redacts a decoded JSON value (as encoding/json produces it with
// UseNumber) and Bytes a JSON document. Every value under a sensitive key
// becomes "[redacted]"; a string that is a secret becomes "[redacted]"; a
// secret inside other text becomes "[redacted:<kind>]", keeping the text
// around it for the reviewer. Bytes writes canonical JSON: compact, object
// keys sorted bytewise, a repeated key keeping its last value, strings
// escaped as encoding/json escapes them but without HTML escaping (so shell
// commands keep their && and > readable). Bytes parses and writes in one pass
// of its own instead of decoding to map[string]any and marshalling, which
// measured several times slower; its output is the same as the slow path's,
// which the tests and FuzzBytes check.
//
// # Home directories and user names
//
// A user's home directory is not a secret, but it names who ran the agent
// and on which machine, and no procedure needs it. HomeDirs (and Homes on
// a decoded value, Text with the secrets of a plain string) writes every
// spelling of one as Home, "~": /home/alice/src and /Users/alice/src are
// ~/src, C:\Users\alice\src is ~\src, and Claude Code's project
// directory -home-alice-src is ~-src. The placeholder is fixed rather than
// configurable: "~" is what a reader and a shell already take for the home
// directory, and the runtime expands it again when a workflow runs.
// Users also writes the names those directories give as ~ wherever else
// a shared document mentions them as a word; it is for copies of what an
// agent saw, not for reports, where a bare word is a value a procedure
// may need.
//
// No error, Finding or other output of this package contains a whole secret:
// findings carry a masked excerpt, and syntax errors name one byte at most.
package redact
