package lock

import (
	"bytes"
	"maps"
	"slices"
)

// Equal reports whether a and b would format to the same bytes: the same
// modules (and retired entries) with the same attributes and observations, in whatever order
// each lock holds them. A nil lock equals an empty one.
//
// It compares the models, not their formatted text, and allocates nothing
// when both locks are already in Format's order (as Parse returns them).
// Values compare as Format writes them: a build date to the second, in any
// time zone; nil and empty platform maps alike; text that quoting folds
// together (Unicode normalisation forms, invalid UTF-8) alike.
func Equal(a, b *Lock) bool {
	var ma, mb, ra, rb []*Module
	var ha, hb []string
	if a != nil {
		ma, ra, ha = sortedModules(a.Modules), sortedModules(a.Retired), a.Hosts
	}
	if b != nil {
		mb, rb, hb = sortedModules(b.Modules), sortedModules(b.Retired), b.Hosts
	}
	return sameTags(ha, hb) && slices.EqualFunc(ma, mb, (*Module).Equal) && slices.EqualFunc(ra, rb, (*Module).Equal)
}

// Equal reports whether m and o would format to the same bytes as the one
// module of a lock; see the package function Equal. A nil module equals
// only a nil one.
func (m *Module) Equal(o *Module) bool {
	if m == nil || o == nil {
		return m == o
	}
	if m == o {
		return true
	}
	return sameText(m.Name, o.Name) &&
		sameText(m.Policy, o.Policy) &&
		sameText(m.Image, o.Image) &&
		sameText(m.Tag, o.Tag) &&
		sameTags(m.Tags, o.Tags) &&
		sameText(m.Digest, o.Digest) &&
		sameText(m.Config, o.Config) &&
		samePlatforms(m.Platforms, o.Platforms) &&
		sameText(m.Version, o.Version) &&
		SameSecond(m.Created, o.Created) &&
		sameText(m.Source, o.Source) &&
		sameText(m.Rule, o.Rule) &&
		sameText(m.Reason, o.Reason) &&
		sameText(m.AllowDowngrade, o.AllowDowngrade) &&
		sameText(m.Restore, o.Restore) &&
		sameText(m.Verified, o.Verified) &&
		sameText(m.Signer, o.Signer) &&
		sameText(m.Signature, o.Signature) &&
		sameText(m.AllowUnverified, o.AllowUnverified) &&
		sameTags(m.Hosts, o.Hosts) &&
		m.Promoted.Equal(o.Promoted) &&
		sameText(m.Hold, o.Hold) &&
		slices.EqualFunc(sortedObservations(m.Observed), sortedObservations(o.Observed), sameObservation)
}

func sameObservation(a, b Observation) bool {
	return sameText(a.Host, b.Host) &&
		sameText(a.Container, b.Container) &&
		sameText(a.Tag, b.Tag) &&
		sameText(a.Digest, b.Digest) &&
		sameText(a.ImageID, b.ImageID) &&
		sameText(a.Version, b.Version) &&
		SameSecond(a.Created, b.Created)
}

// sameText reports whether Format writes a and b alike. Equal strings are;
// different ones are not unless quoting folds them together, which only
// happens to non-ASCII text (cty normalises strings to NFC, and invalid
// UTF-8 becomes U+FFFD), so only then are they quoted to compare.
func sameText[T ~string](x, y T) bool {
	a, b := string(x), string(y)
	if a == b {
		return true
	}
	if isASCII(a) && isASCII(b) {
		return false
	}
	return bytes.Equal(quote(a), quote(b))
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// samePlatforms reports whether Format writes the platform maps a and b
// alike: nil and empty alike, else entry by entry in sorted key order.
func samePlatforms(a, b map[string]string) bool {
	if maps.Equal(a, b) {
		return true
	}
	if len(a) != len(b) {
		return false
	}
	// Different maps are still written alike when quoting folds their text.
	ka, kb := slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))
	for i := range ka {
		if !sameText(ka[i], kb[i]) || !sameText(a[ka[i]], b[kb[i]]) {
			return false
		}
	}
	return true
}

// sameTags reports whether Format writes the tag lists a and b alike:
// sorted, each once, so order and repeats do not count; nil and empty
// alike.
func sameTags(a, b []string) bool {
	if slices.Equal(a, b) {
		return true
	}
	return slices.EqualFunc(tagList(a), tagList(b), sameText)
}
