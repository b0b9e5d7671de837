package propose

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// Proposal is one request: a group's changes as committed, pushed and
// shown to a reviewer. Its JSON is the "proposals" items of pin propose
// --format json (docs/schema/propose.schema.json), and a message template
// is executed over it.
type Proposal struct {
	Group  string `json:"group"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Title  string `json:"title"`
	// Lock is the new lock's hash, "sha256:<hex>" of its bytes.
	Lock    string   `json:"lock"`
	Modules []Module `json:"modules"`
	// Refused are the run's refused modules, not changed (in every
	// proposal of the run).
	Refused []Refused `json:"refused"`
	// Files are the files the commit changes, relative to the repository.
	Files []string `json:"files"`
	// Findings are exported references whose tag and digest disagree
	// ("file:line: …"); the export corrects them.
	Findings []string `json:"findings"`
	// Message is the commit message; Body the request's (Markdown, with
	// the marker).
	Message string  `json:"message"`
	Body    string  `json:"body"`
	Commit  string  `json:"commit"`
	Outcome Outcome `json:"outcome"`
	// Push is what the remote said, when pushed.
	Push *Push `json:"push"`
	// Request is the forge's request, when an API was asked.
	Request *Request `json:"request"`
	// Promotion is what the proposal promotes, when it is a promotion
	// (pin propose --promote); nil else.
	Promotion *Promotion `json:"promotion"`
	// Handover is who and what the request is handed to.
	Handover Handover `json:"handover"`
}

// Module is one module's change.
type Module struct {
	Name   string `json:"name"`
	Policy string `json:"policy"`
	// Verdict: upgrade (deploying the new lock upgrades what runs), held
	// (the lock takes what runs, because the pin or upstream is older),
	// kept (the lock names what runs, as the pin or upstream does), add
	// (a module locked for the first time that runs nowhere), retire (gone
	// from the catalogue: its entry stays, retired, a floor).
	Verdict string    `json:"verdict"`
	Running []Running `json:"running"`
	From    *Image    `json:"from"`
	To      *Image    `json:"to"`
	// Won is the side that won (pin, running, upstream), Rule the rule
	// that ordered it, Why the lock's reason in pin's words.
	Won       string     `json:"won"`
	Rule      string     `json:"rule"`
	Why       string     `json:"why"`
	Floors    []Floor    `json:"floors"`
	Cutover   []Cutover  `json:"cutover"`
	Signature *Signature `json:"signature"`
	// TakesOver names the entries of other modules (renamed, removed)
	// whose floors this module takes over: they leave the lock with this
	// change, their floor now this module's.
	TakesOver []string `json:"takes_over"`
	// Promoted is where a promoted entry came from; nil else.
	Promoted *Promoted `json:"promoted"`
	// Hold is the new entry's hold (a manual pick), or "".
	Hold string `json:"hold"`
	// AllowDowngrade is the catalogue's reason when the new entry is a
	// downgrade it accepted, or "".
	AllowDowngrade string `json:"allow_downgrade"`
	// Upstream is what changed in the software, as the images' labels
	// claim it; nil when they say nothing of it.
	Upstream *Upstream `json:"upstream"`
}

// Image is a locked image.
type Image struct {
	Ref     string `json:"ref"`
	Tag     string `json:"tag"`
	Digest  string `json:"digest"`
	Version string `json:"version"`
	// Created is the build date (RFC 3339), or "".
	Created string `json:"created"`
}

// Running is a container the new entry was held against.
type Running struct {
	Host      string `json:"host"`
	Container string `json:"container"`
	Tag       string `json:"tag"`
	Version   string `json:"version"`
	Digest    string `json:"digest"`
	Created   string `json:"created"`
}

// Floor is what the entry must not go below.
type Floor struct {
	// Kind: container, locked (the previous entry), recorded.
	Kind  string `json:"kind"`
	Where string `json:"where"`
	Image string `json:"image"`
}

// Cutover is the gate's verdict for one container: what the deploy of
// the new lock would do to it.
type Cutover struct {
	Host      string `json:"host"`
	Container string `json:"container"`
	Verdict   string `json:"verdict"`
	Rule      string `json:"rule"`
}

// Signature is how the new entry's signature was verified.
type Signature struct {
	Method string `json:"method"`
	Signer string `json:"signer"`
	Digest string `json:"digest"`
}

// Refused is a module left as it was, and why.
type Refused struct {
	Module string `json:"module"`
	// Kind is resolve's refusal kind (downgrade, unknown-order, …),
	// "cutover" when the gate refused the new entry, or KindWrittenNewer.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// KindWrittenNewer is the kind of a module whose exported reference the
// proposal would make name an older or unorderable image than a file
// names (as pin export refuses it): the reference is left as written.
const KindWrittenNewer = "written-newer"

// Outcome is what became of a proposal.
type Outcome string

const (
	// OutcomePushed: the commit was pushed.
	OutcomePushed Outcome = "pushed"
	// OutcomeUpToDate: the remote already holds this proposal.
	OutcomeUpToDate Outcome = "up-to-date"
	// OutcomeDryRun: committed in the work tree only.
	OutcomeDryRun Outcome = "dry-run"
	// OutcomeDeclined: a person closed the request of this very result:
	// it is not proposed again (a new result is).
	OutcomeDeclined Outcome = "declined"
	// OutcomeOutsideSchedule: the run is outside the catalogue's
	// schedule; nothing pushed, no forge asked.
	OutcomeOutsideSchedule Outcome = "outside-schedule"
)

// Push is what a push did.
type Push struct {
	Ref    string   `json:"ref"`
	Status string   `json:"status"`
	Remote []string `json:"remote"`
}

// Request is the forge's request for a proposal.
type Request struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	// Action: opened, updated, unchanged; closed (declined: a person
	// closed it with this very result).
	Action string `json:"action"`
}

// lockHash is the hash of lk's bytes as the lock file holds them.
func lockHash(lk *lock.Lock) string {
	s := lock.Sum(lk)
	return "sha256:" + hex.EncodeToString(s[:])
}

// changeID is Gerrit's Change-Id of a proposal: the same for every run
// against the same base lock, so that a new run is a new patch set of the
// same change, and a new one once the change is merged.
func changeID(base, group string, oldLock [sha256.Size]byte) string {
	h := sha256.Sum256([]byte("pin propose\x00" + base + "\x00" + group + "\x00" + hex.EncodeToString(oldLock[:])))
	return "I" + hex.EncodeToString(h[:20])
}

func imageOf(m *lock.Module) *Image {
	if m == nil {
		return nil
	}
	return &Image{Ref: m.Ref(), Tag: m.Tag, Digest: m.Digest, Version: m.Version, Created: resolve.Created(m.Created)}
}

// moduleChange describes decision d (nil for the entry old of a module gone
// from the catalogue, retired), with
// the gate's cutovers of its containers.
func moduleChange(d *resolve.Decision, old *lock.Module, cuts []resolve.Cutover) Module {
	if d == nil {
		return Module{Name: old.Name, Policy: string(old.Policy), Verdict: "retire", From: imageOf(old), Running: []Running{}, Floors: []Floor{}, Cutover: []Cutover{}, TakesOver: []string{},
			Why: "the module is no longer in the catalogue: its entry stays in the lock as retired, a floor for any module that takes over what it ran"}
	}
	n := d.New()
	m := Module{Name: n.Name, Policy: string(n.Policy), From: imageOf(d.Old), To: imageOf(n), Won: string(n.Source), Rule: string(n.Rule), Why: n.Reason,
		Running: []Running{}, Floors: []Floor{}, Cutover: []Cutover{}, TakesOver: []string{}}
	for _, t := range d.TakenOver {
		m.TakesOver = append(m.TakesOver, t.Name)
	}
	for _, o := range n.Observed {
		m.Running = append(m.Running, Running{Host: o.Host, Container: o.Container, Tag: o.Tag, Version: o.Version, Digest: o.Digest, Created: resolve.Created(o.Created)})
	}
	for _, f := range d.Floors {
		m.Floors = append(m.Floors, Floor{Kind: string(f.Kind), Where: f.Where(), Image: describe(f.Image)})
	}
	for _, c := range cuts {
		m.Cutover = append(m.Cutover, Cutover{Host: c.Observation.Host, Container: c.Observation.Container, Verdict: string(c.Verdict), Rule: string(c.Order.Rule)})
	}
	m.AllowDowngrade = n.AllowDowngrade
	if n.Verified != "" {
		m.Signature = &Signature{Method: string(n.Verified), Signer: n.Signer, Digest: n.Signature}
	}
	m.Verdict = verdict(d, cuts)
	return m
}

// verdict says what the new entry of d means for what runs (see
// Module.Verdict).
func verdict(d *resolve.Decision, cuts []resolve.Cutover) string {
	if slices.ContainsFunc(cuts, func(c resolve.Cutover) bool { return c.Verdict == resolve.VerdictUpgrade }) {
		return "upgrade"
	}
	if len(cuts) > 0 {
		if d.New().Source == lock.SourceRunning {
			return "held"
		}
		return "kept"
	}
	switch {
	case d.Old == nil:
		return "add"
	case d.Old.Digest != d.New().Digest:
		return "upgrade"
	}
	return "kept"
}

// describe names an image in a sentence: "1.27.3 (sha256:fe63af8ae93d)".
func describe(i image.Image) string {
	v := i.Tag
	if v == "" {
		v = i.VersionLabel()
	}
	switch {
	case v != "" && i.Digest != "":
		return v + " (" + image.Short(i.Digest) + ")"
	case i.Digest != "":
		return image.Short(i.Digest)
	case i.ImageID != "":
		return v + " (image " + image.Short(i.ImageID) + ")"
	}
	return v
}

// short is a digest or commit, shortened.
func short(s string) string {
	if strings.HasPrefix(s, "sha256:") {
		return image.Short(s)
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
