// Package review is the local review page of crystallize: one page per
// bundle, with the procedure as a graph, the alignment matrix of every
// source and held-out trace against the candidate's steps, the
// parameters and their evidence, the workflow source, the validation and
// eval results, the savings and the promotion status, and one Approve /
// Reject form; and the inbox of decisions and approvals that suspended
// runs wait for.
//
// Everything a bundle holds is untrusted input: the page is rendered by
// html/template, which escapes it for the context it lands in (HTML,
// attribute, SVG text), and the graph is laid out in Go and drawn by the
// same templates, never concatenated into markup. The page's script and
// style are files embedded in the binary and served from the page's own
// origin, under a Content-Security-Policy that allows no inline script.
//
// The server (Server) decides nothing a command would not: a decision goes
// through ApproveBundle, the function crystallize approve calls,
// after bundle.Validate has found the bundle sound; an inbox answer goes
// through the Inbox the caller gives, which resumes the run as crystallize
// session inbox answer does. Because it can approve, it defends itself
// as a local server must: every state-changing request carries the
// per-server random token, a request whose Host is not the server's own
// is refused with 421 (a DNS-rebinding page reaches the server under its
// own name), a POST whose Origin is another site's is refused with 403,
// and GET never changes anything.
//
// WriteStatic writes the same page without its forms as one
// self-contained HTML file, for a pull request or a ticket.
package review
