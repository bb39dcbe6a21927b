package review

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io"

	"github.com/crystallize-dev/crystallize/internal/store"
)

//go:embed assets/page.html assets/review.css assets/review.js
var assets embed.FS

var (
	pageCSS = mustAsset("assets/review.css")
	pageJS  = mustAsset("assets/review.js")
	tmpl    = template.Must(template.New("page").Funcs(template.FuncMap{
		"json": compact,
		"inc":  func(i int) int { return i + 1 },
		"deref": func(f *float64) float64 {
			if f == nil {
				return 0
			}
			return *f
		},
		"pages": func(n int) []struct{} {
			return make([]struct{}, n)
		},
	}).ParseFS(assets, "assets/page.html"))
)

func mustAsset(name string) []byte {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // the file is embedded at build time
	}
	return b
}

// CSP is the Content-Security-Policy of the served pages: scripts and
// styles only from the server's own origin (the embedded files), no
// inline script or handler, forms posted only to the server, and no
// framing, plugin or base-URI trick.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// staticCSP is the policy a static page carries in a meta element: no
// script at all, and only its own inline style, by hash.
func staticCSP() string {
	sum := sha256.Sum256(pageCSS)
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src data:; base-uri 'none'; form-action 'none'"
}

// view is what every template receives.
type view struct {
	Title     string
	Static    bool
	StaticCSP string
	CSS       template.CSS
	Token     string
	Approver  string
	Flash     string
	Pending   int

	// bundle page
	Page  *Page
	Index int
	// SelfApproval says why the approver may not approve this bundle
	// (they wrote it); Approve is then disabled, Reject is not.
	SelfApproval string
	// index
	Bundles []listed
	// inbox
	Items    []store.InboxItem
	InboxErr string
}

type listed struct {
	Index int
	Page  *Page
}

// RenderPage writes the bundle page for p.
func renderPage(w io.Writer, v view) error {
	if v.Title == "" && v.Page != nil {
		v.Title = v.Page.Name
	}
	return tmpl.ExecuteTemplate(w, "bundle", v)
}

// WriteStatic writes p as one self-contained HTML file: the page without
// its forms or script, its style inline under a policy that names the
// style by hash and allows no script, so that the file can be attached
// to a pull request or a ticket and opened anywhere. The matrix shows the
// failing traces and a sample of the passing ones.
func WriteStatic(w io.Writer, p *Page) error {
	var buf bytes.Buffer
	v := view{Page: p, Static: true, StaticCSP: staticCSP(), CSS: template.CSS(pageCSS), Title: p.Name}
	if err := renderPage(&buf, v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// LoadStatic loads the bundle in dir for WriteStatic, with its matrix
// sampled rather than paged, and the diff against the last approved
// version of its workflow that stateDir's archive keeps ("" for none), as
// the served page shows it: a page attached to a pull request is read by
// the same reviewer.
func LoadStatic(dir, stateDir string) *Page {
	p := Load(dir)
	if p.Manifest != nil {
		p.Matrix = matrixWindow(p.Manifest, p.Candidate, readFixtures(dir, p.Manifest), 0, true)
		if stateDir != "" {
			p.Previous = archivedVersion(p, stateDir)
		}
	}
	return p
}
