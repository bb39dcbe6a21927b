package redact

import "strings"

// A family is a vendor's credential format that a prefix announces: the
// prefix, then a body of at least min (and, when max is set, at most max)
// bytes of class body. Many of these bodies are hex, which the
// long-credential heuristic leaves alone on purpose (digests and ids are
// hex), so without the prefix they would not be found at all.
//
// The prefixes come from the formats vendors document and public secret
// scanners check. Each is long or distinctive enough not to begin a word
// or an identifier in trace text; the shorter ones (SK, dapi, API-, EAAA)
// also need their exact body length, a digit, and the end of the word
// after the body (end), which ids and words that happen to share the
// prefix do not have.
type family struct {
	prefix   string
	kind     string
	body     uint8 // class of the body's bytes
	min, max int   // body length; max 0 is unbounded
	end      bool  // the body must end the word
	digit    bool  // the body must hold a digit
}

// Kinds of the vendor families, beyond those of scanner.go.
const (
	KindDigitalOcean = "digitalocean"
	KindShopify      = "shopify"
	KindDatabricks   = "databricks"
	KindTwilio       = "twilio"
	KindVendor       = "vendor" // a token of another vendor's documented format
)

// families lists the formats by their first byte, so that a word start
// costs one table lookup and a few prefix comparisons.
var families = func() (t [256][]family) {
	for _, f := range [...]family{
		{prefix: "dop_v1_", kind: KindDigitalOcean, body: cHex, min: 64, max: 64},
		{prefix: "doo_v1_", kind: KindDigitalOcean, body: cHex, min: 64, max: 64},
		{prefix: "dor_v1_", kind: KindDigitalOcean, body: cHex, min: 64, max: 64},
		{prefix: "shpat_", kind: KindShopify, body: cHex, min: 32, max: 32},
		{prefix: "shpca_", kind: KindShopify, body: cHex, min: 32, max: 32},
		{prefix: "shppa_", kind: KindShopify, body: cHex, min: 32, max: 32},
		{prefix: "shpss_", kind: KindShopify, body: cHex, min: 32, max: 32},
		{prefix: "dapi", kind: KindDatabricks, body: cHex, min: 32, max: 32, digit: true},
		{prefix: "SK", kind: KindTwilio, body: cHex, min: 32, max: 32, end: true, digit: true},
		// GitLab's tokens other than glpat- (deploy, runner, CI job,
		// feed, mail, agent, OAuth, SCIM, trigger tokens).
		{prefix: "gldt-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glrt-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glcbt-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glft-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glimt-", kind: KindGitLab, body: cURL64, min: 25},
		{prefix: "glagent-", kind: KindGitLab, body: cURL64, min: 50},
		{prefix: "gloas-", kind: KindGitLab, body: cURL64, min: 64},
		{prefix: "glsoat-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glffct-", kind: KindGitLab, body: cURL64, min: 20},
		{prefix: "glptt-", kind: KindGitLab, body: cHex, min: 40},
		{prefix: "api_org_", kind: KindHuggingFace, body: cAlnum, min: 34},
		{prefix: "xapp-", kind: KindSlack, body: cURL64, min: 30, digit: true},
		{prefix: "sk_prod_", kind: KindStripe, body: cAlnum, min: 16},
		{prefix: "rk_prod_", kind: KindStripe, body: cAlnum, min: 16},
		// Other vendors.
		{prefix: "A3-", kind: KindVendor, body: cURL64, min: 33, end: true, digit: true},
		{prefix: "v1.0-", kind: KindVendor, body: cURL64, min: 170},
		{prefix: "AGE-SECRET-KEY-1", kind: KindVendor, body: cAlnum, min: 58},
		{prefix: "AKCp", kind: KindVendor, body: cAlnum, min: 69, end: true},
		{prefix: "ABSK", kind: KindVendor, body: cCred, min: 109},
		{prefix: "API-", kind: KindVendor, body: cAlnum, min: 26, max: 26, end: true, digit: true},
		{prefix: "CLOJARS_", kind: KindVendor, body: cAlnum, min: 60},
		{prefix: "EAAA", kind: KindVendor, body: cURL64, min: 22, end: true, digit: true},
		{prefix: "EAAC", kind: KindVendor, body: cAlnum, min: 100},
		{prefix: "EAAM", kind: KindVendor, body: cAlnum, min: 100},
		{prefix: "EZAK", kind: KindVendor, body: cAlnum, min: 54},
		{prefix: "EZTK", kind: KindVendor, body: cAlnum, min: 54},
		{prefix: "FLWSECK_TEST-", kind: KindVendor, body: cURL64, min: 12},
		{prefix: "FLWSECK-", kind: KindVendor, body: cURL64, min: 12},
		{prefix: "HRKU-AA", kind: KindVendor, body: cURL64, min: 58},
		{prefix: "LTAI", kind: KindVendor, body: cAlnum, min: 20, max: 20, end: true, digit: true},
		{prefix: "PMAK-", kind: KindVendor, body: cURL64, min: 59},
		{prefix: "SG.", kind: KindVendor, body: cBearer, min: 66},
		{prefix: "dp.pt.", kind: KindVendor, body: cAlnum, min: 43},
		{prefix: "dt0c01.", kind: KindVendor, body: cBearer, min: 89},
		{prefix: "duffel_test_", kind: KindVendor, body: cURL64, min: 43},
		{prefix: "duffel_live_", kind: KindVendor, body: cURL64, min: 43},
		{prefix: "fio-u-", kind: KindVendor, body: cURL64, min: 64},
		{prefix: "fo1_", kind: KindVendor, body: cURL64, min: 43},
		{prefix: "glc_", kind: KindVendor, body: cCred, min: 32},
		{prefix: "glsa_", kind: KindVendor, body: cWord, min: 41},
		{prefix: "hvs.", kind: KindVendor, body: cURL64, min: 90},
		{prefix: "hvb.", kind: KindVendor, body: cURL64, min: 138},
		{prefix: "ico-", kind: KindVendor, body: cAlnum, min: 32, max: 32, end: true, digit: true},
		{prefix: "lin_api_", kind: KindVendor, body: cAlnum, min: 40},
		{prefix: "ntn_", kind: KindVendor, body: cAlnum, min: 46},
		{prefix: "p8e-", kind: KindVendor, body: cAlnum, min: 32, digit: true},
		{prefix: "pnu_", kind: KindVendor, body: cAlnum, min: 36},
		{prefix: "pplx-", kind: KindVendor, body: cAlnum, min: 48},
		{prefix: "pscale_tkn_", kind: KindVendor, body: cBearer, min: 32},
		{prefix: "pscale_pw_", kind: KindVendor, body: cBearer, min: 32},
		{prefix: "pscale_oauth_", kind: KindVendor, body: cBearer, min: 32},
		{prefix: "pul-", kind: KindVendor, body: cHex, min: 40, max: 40, end: true},
		{prefix: "pypi-AgEIcHlwaS5vcmc", kind: KindVendor, body: cURL64, min: 50},
		{prefix: "rdme_", kind: KindVendor, body: cAlnum, min: 70},
		{prefix: "rubygems_", kind: KindVendor, body: cHex, min: 48, max: 48},
		{prefix: "sgp_", kind: KindVendor, body: cWord, min: 40},
		{prefix: "sha256~", kind: KindVendor, body: cURL64, min: 43, max: 43, end: true},
		{prefix: "shippo_live_", kind: KindVendor, body: cHex, min: 40},
		{prefix: "shippo_test_", kind: KindVendor, body: cHex, min: 40},
		{prefix: "sntryu_", kind: KindVendor, body: cHex, min: 64},
		{prefix: "sntrys_", kind: KindVendor, body: cCred, min: 64},
		{prefix: "sq0atp-", kind: KindVendor, body: cURL64, min: 22},
		{prefix: "sq0csp-", kind: KindVendor, body: cURL64, min: 40},
		{prefix: "tk-us-", kind: KindVendor, body: cURL64, min: 48},
		{prefix: "xkeysib-", kind: KindVendor, body: cURL64, min: 64},
	} {
		t[f.prefix[0]] = append(t[f.prefix[0]], f)
	}
	return t
}()

// familySecond holds, for each first byte, the set of second bytes of
// the families' prefixes, so that most word starts (a word whose first
// letter begins a prefix, but not its second) cost two lookups.
var familySecond = func() (t [256][4]uint64) {
	for c := range families {
		for _, f := range families[c] {
			b := f.prefix[1]
			t[c][b/64] |= 1 << (b % 64)
		}
	}
	return t
}()

// familyAt matches, at s[i], a word start, a credential of one of the
// vendor families.
func familyAt(s string, i int) (match, bool) {
	t := s[i:]
	if len(t) < 2 || familySecond[t[0]][t[1]/64]&(1<<(t[1]%64)) == 0 {
		return match{}, false
	}
	for _, f := range families[t[0]] {
		if !strings.HasPrefix(t, f.prefix) {
			continue
		}
		j := i + len(f.prefix)
		for j < len(s) && class[s[j]]&f.body != 0 {
			j++
		}
		n := j - (i + len(f.prefix))
		switch {
		case n < f.min, f.max > 0 && n > f.max,
			f.end && j < len(s) && class[s[j]]&cAlnum != 0,
			f.digit && !hasDigit(s[i+len(f.prefix):j]):
			continue
		}
		return match{i, j, f.kind}, true
	}
	return match{}, false
}
