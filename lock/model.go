package lock

import (
	"github.com/hashicorp/hcl/v2"

	"cmp"
	"slices"
	"strings"
	"time"
)

// Lock is the whole lockfile.
type Lock struct {
	// Hosts are the catalogue's hosts whose containers the lock was held
	// against: every host a "pin resolve" read, and those "pin lock
	// --from-host" read since. A catalogue host not among them joined
	// after; any module may run there (by its pin.module label), so
	// reading another host alone cannot know its floors. Format writes
	// them sorted, each once; nil and empty alike.
	Hosts   []string
	Modules []*Module
	// Retired are the entries of modules that left the catalogue: what
	// they locked, and the containers they were held against, stay floors
	// (a floor belongs to what ran and what was locked, not to a module's
	// name). An entry is retired when its module leaves the catalogue, and
	// leaves the lock when a module takes it over (see package resolve).
	// Format writes them after the modules, as "retired" blocks of the
	// same attributes, sorted by name; a lock without any writes none.
	Retired []*Module
}

// Module is the decision for one module.
type Module struct {
	Name   string
	Policy Policy
	// Image is the full repository name.
	Image string
	// Tag is the tag as written upstream ("v1.2" stays "v1.2"); may be empty.
	Tag string
	// Tags are the tags that named Digest when the entry was locked, among
	// those the run read anyway (no request is made for them): the
	// upstream tag the policy resolved, and the tags the hosts started the
	// containers that run Digest from. Format writes them sorted, each
	// once; nil and empty alike. "pin outdated" checks them (with Tag) for
	// tag-moved.
	Tags []string
	// Digest is the registry digest to run: the index digest for a
	// multi-platform image.
	Digest string
	// Config is the config digest of the locked platform, when known.
	Config string
	// Platforms maps each platform of an index to its manifest digest.
	Platforms map[string]string
	// Version is the image's version under the module's scheme, when known.
	Version string
	// Created is the image's build date, when known.
	Created time.Time
	// Source is the side that won: SourcePin, SourceRunning or SourceUpstream.
	Source Source
	// Rule is the ordering rule that decided (content, version, created).
	Rule Rule
	// Reason says in words why this image was chosen.
	Reason string
	// AllowDowngrade is the catalogue's stated reason once it accepted a
	// downgrade, kept while the catalogue states the same words (they
	// accept no other); Restore the backup it restores from.
	AllowDowngrade string
	Restore        string
	// Verified is how the image's signature was verified (MethodCosignKey
	// or MethodCosignKeyless), empty when the module has no verify policy or the
	// image (one that runs, kept as a floor) is not verified; Signer is the
	// key's fingerprint or, keyless, "<issuer> <subject>" of the
	// certificate; Signature the digest of the signature manifest (the
	// .sig tag's, or the referrer holding a Sigstore bundle).
	Verified  Method
	Signer    string
	Signature string
	// AllowUnverified is the catalogue's stated reason to keep this image
	// once it could no longer be verified (Verified is then empty), kept
	// while the catalogue states the same words.
	AllowUnverified string
	// Observed are the images hosts ran when this entry was decided.
	Observed []Observation
	// Hosts are the module's hosts whose containers the entry was held
	// against, read when it was written or carried from an entry before
	// it: a host among them with no Observed ran nothing of the module. A
	// runs_on host not among them was never read ("pin lock --from-host"
	// on another host then cannot know its floors). Format writes them
	// sorted, each once; nil and empty alike.
	Hosts []string
	// Promoted says where the entry's image came from when "pin promote"
	// wrote it (the environment, hosts and start it was observed running
	// at, and the release it was promoted with); nil otherwise. Format
	// writes it as a "promoted" block, only when set.
	Promoted *Promotion
	// Hold is the reason of a manual pick ("pin promote --pick"): "pin
	// resolve" and later automatic promotions keep the entry's image as
	// it is (never below a floor) until the hold is lifted ("pin promote
	// --lift"). Empty: no hold.
	Hold string

	// DeclRange is where Parse read the entry ("pin.lock.hcl:12,1-16"); it
	// is not part of the lock (Format does not write it, Equal ignores it).
	DeclRange hcl.Range
}

// Promotion is the provenance of an entry "pin promote" wrote: the
// digest was observed running on every host of environment From that
// runs the module (Hosts), the earliest of those containers started at
// Since, and it was promoted together with the modules whose "module
// digest" lines Release hashes (a multi-image release is one unit).
//
// Health is what the engines reported of each container of the module on
// From's hosts when it was promoted, a line each ("s1/app: running,
// healthy"), sorted: the evidence the build ran healthy, and what the
// environment did not require of it ("(not required)").
type Promotion struct {
	From    string
	Hosts   []string
	Since   time.Time
	Release string
	Health  []string
}

// Equal reports whether p and o format alike; nil equals only nil.
func (p *Promotion) Equal(o *Promotion) bool {
	if p == nil || o == nil {
		return p == o
	}
	return sameText(p.From, o.From) && sameTags(p.Hosts, o.Hosts) && SameSecond(p.Since, o.Since) && sameText(p.Release, o.Release) &&
		sameTags(p.Health, o.Health)
}

// Observation is what one container on one host ran.
type Observation struct {
	Host      string
	Container string
	Tag       string
	// Digest is the registry digest the host knows the image by; empty for
	// a loaded or locally built image.
	Digest string
	// ImageID is the host's image ID (config digest or manifest digest,
	// depending on the image store).
	ImageID string
	Version string
	Created time.Time
}

// Module returns the entry for name, or nil. Entries sorted by name (as
// Parse reads what Format wrote) are found by a binary search; a lock in
// another order is scanned, so every lock answers the same. Resolving
// asks it once per module: a scan each time made a warm run of 11,000
// modules spend 2 s comparing names.
func (l *Lock) Module(name string) *Module {
	if l == nil {
		return nil
	}
	if i, ok := slices.BinarySearchFunc(l.Modules, name, func(m *Module, n string) int { return strings.Compare(m.Name, n) }); ok {
		return l.Modules[i]
	}
	for _, m := range l.Modules {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// RetiredEntry returns the retired entry named name, or nil.
func (l *Lock) RetiredEntry(name string) *Module {
	if l == nil {
		return nil
	}
	for _, m := range l.Retired {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Ref renders the locked image as "repository:tag@digest".
func (m *Module) Ref() string {
	s := m.Image
	if m.Tag != "" {
		s += ":" + m.Tag
	}
	if m.Digest != "" {
		s += "@" + m.Digest
	}
	return s
}

// normalised returns l in the order Format writes: modules by name, each
// module's observations by compareObservations. It never changes l or
// anything l points to: a module whose observations are out of order is
// copied with a sorted copy of them, the module list is cloned before it is
// sorted, and what is already in order is shared. A nil lock is an empty
// one.
func (l *Lock) normalised() *Lock {
	if l == nil {
		return &Lock{}
	}
	// sortedModules and sortedObservations hand back their argument, the
	// same array, when it is already in order.
	return &Lock{Hosts: tagList(l.Hosts), Modules: normalisedModules(l.Modules), Retired: normalisedModules(l.Retired)}
}

// normalisedModules returns ms sorted by name, each module's observations
// sorted, sharing what is already in order and changing nothing of ms.
func normalisedModules(ms []*Module) []*Module {
	out := sortedModules(ms)
	cloned := len(out) > 0 && &out[0] != &ms[0]
	for i, m := range out {
		obs := sortedObservations(m.Observed)
		if len(obs) == 0 || &obs[0] == &m.Observed[0] {
			continue
		}
		if !cloned {
			out = slices.Clone(out)
			cloned = true
		}
		c := *m
		c.Observed = obs
		out[i] = &c
	}
	return out
}

// sortedModules returns ms sorted by name: ms itself when it is in order,
// else a sorted copy.
func sortedModules(ms []*Module) []*Module {
	if slices.IsSortedFunc(ms, compareModules) {
		return ms
	}
	ms = slices.Clone(ms)
	slices.SortFunc(ms, compareModules)
	return ms
}

// sortedObservations returns obs in Format's order: obs itself when it is
// in order, else a sorted copy.
func sortedObservations(obs []Observation) []Observation {
	if slices.IsSortedFunc(obs, compareObservations) {
		return obs
	}
	obs = slices.Clone(obs)
	slices.SortFunc(obs, compareObservations)
	return obs
}

func compareModules(a, b *Module) int { return strings.Compare(a.Name, b.Name) }

// compareObservations orders observations by host and container, then,
// for two images seen in one container (a lock merged from two runs, a
// host listed twice), by digest, image ID and tag, and last by version and
// build date, so that only observations Format writes alike compare equal
// and their order never shows in the bytes.
func compareObservations(a, b Observation) int {
	return cmp.Or(
		strings.Compare(a.Host, b.Host),
		strings.Compare(a.Container, b.Container),
		strings.Compare(a.Digest, b.Digest),
		strings.Compare(a.ImageID, b.ImageID),
		strings.Compare(a.Tag, b.Tag),
		strings.Compare(a.Version, b.Version),
		a.Created.Compare(b.Created),
	)
}
