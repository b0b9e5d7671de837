package resolve

import (
	"fmt"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// FloorKind says where a floor comes from.
type FloorKind string

const (
	// FloorContainer: a container a host reports for the module now.
	FloorContainer FloorKind = "container"
	// FloorLocked: the previous lock entry.
	FloorLocked FloorKind = "locked"
	// FloorRecorded: a container the previous lock recorded on a host this
	// run did not read ("pin lock --from-host" reads one host).
	FloorRecorded FloorKind = "recorded"
	// FloorInherited: the previous lock's entry of another module, or of
	// a module that left the catalogue (a retired entry), whose floor this
	// module takes over: it recorded a container this module takes over,
	// or it was retired with the module's repository and recorded no
	// container (see takeover.go). A floor belongs to what ran and what
	// was locked, not to a module's name.
	FloorInherited FloorKind = "inherited"
)

// Floor is an image the lock must not go below.
type Floor struct {
	Kind  FloorKind
	Image image.Image
	// Observation is the container, for FloorContainer and FloorRecorded.
	Observation observe.Observation
	// Entry is the previous lock entry, for FloorLocked and
	// FloorInherited; Retired says, of a FloorInherited, that the entry is
	// a retired one (its module left the catalogue).
	Entry   *lock.Module
	Retired bool
	// Elsewhere is, of a FloorInherited, the other lock the entry is in
	// (Input.Record.Elsewhere); "" for this run's previous lock.
	Elsewhere string
	// content says, of a FloorLocked or FloorInherited, whether its
	// digest's content was read; when it was not, its lines hold the
	// floor up, but it is never kept (see unreadLock).
	content contentState
}

// unread reports whether f is a previous entry whose content nobody could
// read.
func (f Floor) unread() bool { return f.entry() && f.content != contentRead }

// entry reports whether f is a previous lock entry (the module's own, or
// one it takes over), not a container.
func (f Floor) entry() bool { return f.Kind == FloorLocked || f.Kind == FloorInherited }

// container reports whether f is a container: one a host reports now, or
// one the previous entry recorded on a host not read.
func (f Floor) container() bool { return f.Kind == FloorContainer || f.Kind == FloorRecorded }

// entryName names an inherited entry for sentences: `module "forge"
// (retired)`.
func (f Floor) entryName() string {
	s := fmt.Sprintf("module %q", f.Entry.Name)
	if f.Retired {
		s += " (retired)"
	}
	if f.Elsewhere != "" {
		s += " in " + f.Elsewhere + " (it ran on a host that is this environment's now)"
	}
	return s
}

// entryOf begins the words for an inherited entry: of the previous lock,
// or of another one (named by entryName).
func (f Floor) entryOf() string {
	if f.Elsewhere != "" {
		return "the entry for "
	}
	return "the previous lock's entry for "
}

// Where names the floor for sentences: "mesh-1/forgejo", "the previous
// lock".
func (f Floor) Where() string {
	switch f.Kind {
	case FloorLocked:
		return "the previous lock"
	case FloorInherited:
		return f.entryOf() + f.entryName()
	case FloorRecorded:
		return f.Observation.Where() + " (recorded in the lock)"
	}
	return f.Observation.Where()
}

// runs says what the floor runs, or holds: "mesh-1/forgejo runs",
// "the previous lock names".
func (f Floor) runs() string {
	if f.Kind == FloorLocked {
		return "the previous lock names"
	}
	if f.Kind == FloorInherited {
		return f.entryOf() + f.entryName() + " names"
	}
	if f.Kind == FloorRecorded {
		return f.Observation.Where() + " ran (recorded in the lock)"
	}
	return f.Observation.Where() + " runs"
}

// IsFloor reports whether a container bounds the lock from below: every
// container does, whatever its state (running, restarting, paused,
// exited, dead, crash-looping: an image that has run has touched the data,
// and a stopped container starts again), except one that was created and
// never started ("created"), which has touched nothing. That one is
// reported, not a floor; so are, on Kubernetes, a workload scaled to zero
// (read from its template: nothing runs it) and an ephemeral (debug)
// container, which is not part of its workload.
func IsFloor(o observe.Observation) bool {
	return o.State != "created" && o.State != observe.StateScaledToZero && !o.Ephemeral()
}

// floors gathers module floors: the containers the hosts report (in host
// and container order), then the previous lock entry (old, as its content
// says: see lockedImage), then what the previous entry recorded on the
// hosts rec says were not read.
func floors(obs []observe.Observation, old *lock.Module, oldImg *image.Image, rec Record) []Floor {
	var out []Floor
	for _, o := range obs {
		if IsFloor(o) {
			out = append(out, Floor{Kind: FloorContainer, Image: o.Image, Observation: o})
		}
	}
	if oldImg != nil {
		out = append(out, Floor{Kind: FloorLocked, Image: *oldImg, Entry: old})
	}
	for _, ob := range recorded(old, rec) {
		out = append(out, Floor{Kind: FloorRecorded, Image: recordedImage(old, ob), Observation: observe.Observation{Host: ob.Host, Container: ob.Container, State: "recorded", Image: recordedImage(old, ob)}})
	}
	return out
}

// recorded lists what the previous entry recorded on hosts this run did
// not read (rec): in ModeFromHost every host but the one read, else the
// hosts the run went on without (skip_unreachable).
func recorded(old *lock.Module, rec Record) []lock.Observation {
	if old == nil {
		return nil
	}
	var out []lock.Observation
	for _, ob := range old.Observed {
		if !rec.Read(ob.Host) {
			out = append(out, ob)
		}
	}
	return out
}

// recordedImage is what the lock recorded of an observation. Its digest is
// described again from content where a registry may be asked (see
// describeRecorded); the recorded lines are what is left offline.
func recordedImage(old *lock.Module, ob lock.Observation) image.Image {
	img := image.Image{Repository: old.Image, Tag: ob.Tag, Digest: ob.Digest, ImageID: ob.ImageID, Created: ob.Created}
	if ob.Version != "" {
		img.Labels = map[string]string{image.LabelVersion: ob.Version}
	}
	return img
}
