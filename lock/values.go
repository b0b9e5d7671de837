package lock

import (
	"slices"
	"strings"
)

// The values a lock entry's policy, source, rule and verified attributes
// take. The lock is a file of its own: it names its values itself, and
// the packages that decide them (catalogue's policies, order's rules,
// verify's methods) write these same words.

// Policy is the module's pin policy when the entry was locked.
type Policy string

const (
	PolicyExact          Policy = "exact"
	PolicyAtLeastRunning Policy = "at-least-running"
	PolicyTrackUpstream  Policy = "track-upstream"
)

// Policies lists the policies a lock accepts, in the order documentation
// names them.
var Policies = []Policy{PolicyExact, PolicyAtLeastRunning, PolicyTrackUpstream}

// Source is the side that won a module's decision.
type Source string

const (
	SourcePin      Source = "pin"
	SourceRunning  Source = "running"
	SourceUpstream Source = "upstream"
)

// Sources lists the sources a lock accepts.
var Sources = []Source{SourcePin, SourceRunning, SourceUpstream}

// Rule is the ordering rule that decided an entry.
type Rule string

const (
	RuleContent Rule = "content"
	RuleVersion Rule = "version"
	RuleCreated Rule = "created"
)

// Method is how an entry's signature was verified.
type Method string

const (
	// MethodCosignKey: a cosign signature verified with a public key.
	MethodCosignKey Method = "cosign-key"
	// MethodCosignKeyless: a cosign signature made with a short-lived
	// certificate, verified against a Sigstore trusted root and an
	// identity.
	MethodCosignKeyless Method = "cosign-keyless"
)

// known reports whether v is one of vs.
func known[T ~string](v T, vs []T) bool { return slices.Contains(vs, v) }

// quotedList renders vs as `"a", "b" or "c"`, for a diagnostic.
func quotedList[T ~string](vs []T) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = `"` + string(v) + `"`
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
