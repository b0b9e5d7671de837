package resolve

import (
	"context"
	"fmt"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/order"
	"github.com/pin-tool/pin/lock"
)

// The words that accept a downgrade: allow_downgrade (and, for a one_way
// module, restore) in the catalogue, and which downgrade they were spent
// on, as the previous entries record it.

// downgradeAllowed reports whether the catalogue states a downgrade in
// words: allow_downgrade, and for a one_way module restore too.
func (dc *decider) downgradeAllowed() bool {
	return wordsAccept(dc.m, dc.m.AllowDowngrade, dc.m.Restore)
}

// wordsAccept is the one rule of words that accept a downgrade of module
// m, wherever they are written (the catalogue, a lock entry, an
// override): a reason in words (letters or digits), and for a one_way
// module a restore in words too.
func wordsAccept(m *catalogue.Module, downgrade, restore string) bool {
	return catalogue.HasWords(downgrade) && (!m.OneWay || catalogue.HasWords(restore))
}

// spent reports whether the catalogue's allow_downgrade was already used,
// in the same words, for another downgrade than one below floor f: a
// previous entry of the module (its own, or one it takes over: a rename
// does not hand the words back) records a downgrade accepted with these
// words, and f is not among the containers any such entry was held
// against (a container that started a newer image since, or a previous
// entry itself). A reason accepts one downgrade; new words accept the next.
func (dc *decider) spent(ctx context.Context, f Floor) bool {
	spent := false
	for _, e := range dc.previous() {
		if e.AllowDowngrade == "" || e.AllowDowngrade != dc.m.AllowDowngrade {
			continue
		}
		if dc.recordedBy(ctx, e, f) {
			return false
		}
		spent = true
	}
	return spent
}

// previous lists the module's previous entries: its own, then those it
// takes over.
func (dc *decider) previous() []*lock.Module {
	if dc.old == nil {
		return dc.heirs
	}
	return append([]*lock.Module{dc.old}, dc.heirs...)
}

// spender names the previous entry that spent the catalogue's words, for
// sentences: "the previous lock", or "the previous lock's entry for module
// "forge"".
func (dc *decider) spender() string {
	for _, e := range dc.previous() {
		if e.AllowDowngrade != "" && e.AllowDowngrade == dc.m.AllowDowngrade && e != dc.old {
			return fmt.Sprintf("the previous lock's entry for module %q", e.Name)
		}
	}
	return "the previous lock"
}

// recordedBy is the package function recordedBy, and where the digests
// differ, the content they name: a container restarted from another
// reference of one image (the index it was pulled by, then its
// platform's manifest, on a host whose image ID is the digest pulled)
// runs what the entry recorded. The recorded digest is read by digest
// (from the cache, where it was read when the entry was written).
func (dc *decider) recordedBy(ctx context.Context, old *lock.Module, f Floor) bool {
	if recordedBy(old, f) {
		return true
	}
	if f.entry() || dc.reg == nil {
		return false
	}
	for _, ob := range old.Observed {
		if ob.Host != f.Observation.Host || ob.Digest == "" {
			continue
		}
		img, state, err := describe(ctx, dc.reg, dc.m, ob.Digest, f.Image.Platform)
		if err != nil || state != contentRead {
			continue
		}
		if order.Compare(img, f.Image, dc.opts).Rule == order.RuleContent {
			return true
		}
	}
	return false
}

// recordedBy reports whether floor f is a container old was held against.
func recordedBy(old *lock.Module, f Floor) bool {
	if f.entry() {
		return false
	}
	for _, ob := range old.Observed {
		if ob.Host != f.Observation.Host {
			continue
		}
		// The same content: one registry digest; or, where both sides
		// know one, one image ID, and the host says it is the config
		// digest (Docker's classic store): a container restarted from
		// another reference of the same image (its index, or its
		// platform's manifest) keeps it.
		switch {
		case ob.Digest != "" && ob.Digest == f.Image.Digest:
			return true
		case ob.ImageID != "" && ob.ImageID == f.Image.ImageID && (ob.Digest == "" || f.Image.Digest == "" || f.Image.ConfigDigest == f.Image.ImageID):
			return true
		}
		if d, ok := f.Image.ManifestFor(f.Image.Platform); ok && ob.Digest != "" && d == ob.Digest {
			return true
		}
	}
	return false
}

// allowedText states the downgrade the catalogue accepted.
func (dc *decider) allowedText() string {
	s := "; downgrade allowed: " + dc.m.AllowDowngrade
	if dc.m.Restore != "" {
		s += "; restore from: " + dc.m.Restore
	}
	return s
}
