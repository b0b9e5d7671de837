package resolve

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

// RefusalKind says why a module cannot be locked.
type RefusalKind string

const (
	// KindDowngrade: what would be locked is older than a floor.
	KindDowngrade RefusalKind = "downgrade"
	// KindUnknown: what would be locked cannot be ordered against a floor.
	KindUnknown RefusalKind = "unknown-order"
	// KindNoDigest: the newest image runs without a registry digest.
	KindNoDigest RefusalKind = "no-registry-digest"
	// KindNothing: no pin, no candidate and no floor.
	KindNothing RefusalKind = "nothing-to-lock"
	// KindUnreadHosts: lock --from-host, for a module whose other hosts
	// the previous lock has no record of: their floors are not known.
	KindUnreadHosts RefusalKind = "hosts-not-read"
	// KindLockUnread: the previous entry is the newest by its lines, but
	// its digest's content could not be read.
	KindLockUnread RefusalKind = "lock-not-served"
	// KindLockUnreadOffline: the same, offline, where neither a mirror nor
	// the cache holds the entry's digest.
	KindLockUnreadOffline RefusalKind = "lock-not-read-offline"
	// KindNotServed: Judge, of a new image whose registry has no image by
	// its reference (a tag it does not have, a digest it does not
	// serve): nothing orders it against what runs.
	KindNotServed RefusalKind = "not-served"
)

// Refusal says why a module cannot be locked: the image that would be
// locked is older than a floor, or cannot be ordered against it.
type Refusal struct {
	Module string
	Kind   RefusalKind
	// Chosen is the image that would be locked and What names it ("the
	// exact pin").
	Chosen image.Image
	What   string
	// Floor is the floor it fails against.
	Floor Floor
	Order order.Result
	// Advice is what to write in the module to decide, where the refusal
	// is a downgrade or an unknown order that writing can decide; its
	// text ends Error.
	Advice []Advice
	opts   order.Options
	fix    string
}

// Error renders the refusal for people: the module, the floor, both images
// with what was known of each, the rule and what to write to decide.
func (r *Refusal) Error() string {
	var b strings.Builder
	switch {
	case r.Floor.Kind == "" && r.fix != "":
		// Nothing to hold it against: an image of unknown version, say.
		fmt.Fprintf(&b, "module %q: refusing: %s", r.Module, r.fix)
		return b.String()
	}
	switch r.Kind {
	case KindNotServed:
		fmt.Fprintf(&b, "module %q: refusing: %s has no image %s (%s): it cannot be ordered against what %s", r.Module, registryOf(r.Chosen.Repository), r.Chosen.Ref(), lacks(r.Chosen), r.Floor.runs())
		fmt.Fprintf(&b, "\n  %s: %s", r.Floor.runs(), r.Floor.Image.Ref())
		fmt.Fprintf(&b, "\n  to decide, %s", r.fix)
		return b.String()
	case KindDowngrade:
		fmt.Fprintf(&b, "module %q: refusing a downgrade: %s is older than what %s", r.Module, r.What, r.Floor.runs()+"")
	case KindNoDigest, KindNothing, KindUnreadHosts, KindUnverified, KindLockUnread, KindLockUnreadOffline:
		fmt.Fprintf(&b, "module %q: refusing: %s", r.Module, r.fix)
		return b.String()
	default:
		fmt.Fprintf(&b, "module %q: refusing: %s cannot be ordered against what %s", r.Module, r.What, r.Floor.runs())
	}
	fmt.Fprintf(&b, "\n  %s: %s%s\n    %s", r.What, r.Chosen.Ref(), indexNote(r.Chosen), r.opts.Known(r.Chosen))
	fmt.Fprintf(&b, "\n  %s: %s%s\n    %s", r.Floor.runs(), r.Floor.Image.Ref(), indexNote(r.Floor.Image), r.opts.Known(r.Floor.Image))
	fmt.Fprintf(&b, "\n  ordered by rule %q: %s", r.Order.Rule, r.Order.Detail)
	if r.fix != "" {
		fmt.Fprintf(&b, "\n  to decide, %s", r.fix)
	}
	return b.String()
}

// indexNote says, of an index read for one platform, which entry that is:
// what a pull there gets, and what was ordered.
func indexNote(img image.Image) string {
	if len(img.Platforms) == 0 || img.Platform == "" {
		return ""
	}
	d, ok := img.ManifestFor(img.Platform)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (an index: a pull on %s gets its entry %s, which is what was ordered)", img.Platform, image.Short(d))
}

// lacks says what a registry lacks of img's reference: "no tag 9.9.9 in
// forge/forgejo", "no manifest sha256:… in forge/forgejo".
func lacks(img image.Image) string {
	repo := img.Repository
	if r, err := name.NewRepository(repo); err == nil {
		repo = r.RepositoryStr()
	}
	if img.Digest != "" {
		return fmt.Sprintf("no manifest %s in %s", img.Digest, repo)
	}
	return fmt.Sprintf("no tag %s in %s", img.Tag, repo)
}

// registryOf is a repository's registry host, as in image names.
func registryOf(repo string) string {
	if r, err := name.NewRepository(repo); err == nil {
		return r.RegistryStr()
	}
	host, _, _ := strings.Cut(repo, "/")
	return host
}
