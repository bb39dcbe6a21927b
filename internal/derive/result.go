package derive

import "sort"

// Derivation is the outcome of deriving one parameter from the others,
// as `crystallize synth derive --target NAME --json` prints it.
type Derivation struct {
	// Expression is the expression's source, nil when none was found.
	Expression *string `json:"expression"`
	Found      bool    `json:"found"`
	Target     string  `json:"target"`
}

// Derive is Parameter as a Derivation.
func Derive(examples []map[string]string, target string) Derivation {
	d := Derivation{Target: target}
	if e, ok := Parameter(examples, target); ok {
		s := e.String()
		d.Expression, d.Found = &s, true
	}
	return d
}

// Derivations is what every parameter that can be derived derives from,
// and what a caller still has to give, as `crystallize synth derive --all
// --json` prints it.
type Derivations struct {
	// Derived maps each derived parameter to its expression's source.
	Derived map[string]string `json:"derived"`
	// Kept is Kept's list: the parameters that are not derived.
	Kept []string `json:"kept"`
}

// DeriveAll is Parameters and Kept as Derivations.
func DeriveAll(examples []map[string]string) Derivations {
	derived := Parameters(examples)
	d := Derivations{Derived: map[string]string{}, Kept: Kept(examples, derived)}
	for k, e := range derived {
		d.Derived[k] = e.String()
	}
	return d
}

// Names returns the derived parameters, sorted.
func (d Derivations) Names() []string {
	names := make([]string, 0, len(d.Derived))
	for k := range d.Derived {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
