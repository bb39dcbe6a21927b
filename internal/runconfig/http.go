package runconfig

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// HTTPBinding is the http executor of a [tools."name"] entry:
//
//	http = { method = "POST", url = "https://api.github.com/repos/{repo}/pulls",
//	         headers = { Authorization = "Bearer {secret:GITHUB_TOKEN}" }, body = "json" }
//
// Every call is one request. In the URL, "{name}" takes the call's
// argument name, escaped as a path segment before the "?" and as a query
// value after it, so a value cannot change the URL's shape; a value that
// makes a "." or ".." segment, as it is or once a server decodes its
// %2F, is refused (ErrPathSegment). Header
// values are templates too, and the only place a secret may appear, as
// "{secret:ID}": a URL is recorded, headers never are. The arguments
// neither the URL nor a header took are sent as Body says. A response is
// parsed as JSON when its content type says JSON or it is valid JSON, and
// is otherwise returned as text; a status outside 2xx is an error naming
// the status and the URL. The binding's timeout bounds the whole
// exchange, and cancelling the run aborts it.
type HTTPBinding struct {
	// Method is the request method; default GET.
	Method string `toml:"method"`
	// URL is an absolute http or https URL template.
	URL string `toml:"url"`
	// Headers are added to the request; values are templates.
	Headers map[string]string `toml:"headers"`
	// Body says what carries the remaining arguments: BodyJSON (a JSON
	// object as the request body, the default for POST, PUT and PATCH),
	// BodyQuery (query parameters, the default for other methods) or
	// BodyNone (they are not sent).
	Body string `toml:"body"`
}

// Values of HTTPBinding.Body.
const (
	BodyJSON  = "json"
	BodyQuery = "query"
	BodyNone  = "none"
)

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// check reports every problem of the binding at path p of file.
func (hb *HTTPBinding) check(file, p string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s%s: %s", file, p, field, fmt.Sprintf(format, args...)))
	}
	if m := hb.RequestMethod(); !slices.Contains(httpMethods, m) {
		bad(".method", "unknown method %q; want one of %s", hb.Method, strings.Join(httpMethods, ", "))
	}
	// The template is checked with placeholders filled, since "{" is not
	// valid in a URL's host.
	u, err := url.Parse(placeholders.Replace(hb.URL))
	switch {
	case hb.URL == "":
		bad(".url", "empty url")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		bad(".url", "%q is not an absolute http or https URL", hb.URL)
	}
	if ids := TemplateSecrets(hb.URL); len(ids) > 0 {
		bad(".url", "names secret %s; URLs are recorded, so secrets go in headers", ids[0])
	}
	switch hb.Body {
	case "", BodyJSON, BodyQuery, BodyNone:
	default:
		bad(".body", "unknown body %q; want %s, %s or %s", hb.Body, BodyJSON, BodyQuery, BodyNone)
	}
	return errs
}

// placeholders stands a harmless value in for every template brace.
var placeholders = strings.NewReplacer("{", "x", "}", "x")

func (hb *HTTPBinding) RequestMethod() string {
	if hb.Method == "" {
		return http.MethodGet
	}
	return strings.ToUpper(hb.Method)
}

func (hb *HTTPBinding) BodyKind() string {
	if hb.Body != "" {
		return hb.Body
	}
	switch hb.RequestMethod() {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return BodyJSON
	}
	return BodyQuery
}
