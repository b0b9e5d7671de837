package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

// JSONSchema is the version of pin's JSON output. It changes only when a
// field changes meaning or goes away; new fields may be added.
const JSONSchema = 1

// planOutput is the resolve plan, as JSON and as the source of the table.
type planOutput struct {
	Schema    int            `json:"schema"`
	Command   string         `json:"command"`
	Catalogue string         `json:"catalogue"`
	Lock      string         `json:"lock"`
	Changed   bool           `json:"changed"`
	Written   bool           `json:"written"`
	Modules   []moduleOutput `json:"modules"`
	// Environments are, for a catalogue with environment blocks, each
	// environment's lock; Lock is then the --lock path they are beside,
	// and each module says its environment. Environment is set on the
	// per-environment plans the table is rendered from.
	Environments []envOutput `json:"environments,omitempty"`
	Environment  string      `json:"-"`
}

type moduleOutput struct {
	Name string `json:"name"`
	// Environment is the module's environment, whose lock this entry is
	// in; empty without environments.
	Environment  string              `json:"environment,omitempty"`
	Policy       string              `json:"policy"`
	Pin          string              `json:"pin,omitempty"`
	Change       string              `json:"change"`
	Old          *imageOutput        `json:"old"`
	New          *imageOutput        `json:"new"`
	Observations []observationOutput `json:"observations"`
	Missing      []string            `json:"missing,omitempty"`
	Skew         bool                `json:"skew"`
	Refusal      *refusalOutput      `json:"refusal"`
	Error        string              `json:"error,omitempty"`
	// TakenOver are the previous entries of other modules (or retired
	// ones) whose floors the module takes over; TakenOverBy, of a retired
	// entry or one whose module left the catalogue, the modules that took
	// it over.
	TakenOver   []takenOverOutput `json:"taken_over,omitempty"`
	TakenOverBy []string          `json:"taken_over_by,omitempty"`
	// Skipped are the upstream tags track-upstream did not lock, and why.
	Skipped []skippedOutput `json:"skipped,omitempty"`
	// Why says, of a retired entry, what it is for.
	Why string `json:"why,omitempty"`
	// Won says what won in this run: the pin, what runs, the upstream
	// tag, or the previous lock, whose entry was kept (new's source then
	// says what won when it was written); KeptFrom names the module whose
	// previous entry was kept, when another's was (taken over).
	Won      string `json:"won,omitempty"`
	KeptFrom string `json:"kept_from,omitempty"`
	// Repository says why new names another repository than the
	// module's image (the image moved; the previous entry was kept).
	Repository *repositoryOutput `json:"repository,omitempty"`

	// changed lists the lines of the entry that change, for the table.
	changed []string
	// pinRef is the pin as the table shows it (refText).
	pinRef string
}

type repositoryOutput struct {
	Catalogue string `json:"catalogue"`
	Locked    string `json:"locked"`
	Why       string `json:"why"`
}

type skippedOutput struct {
	Tag          string `json:"tag"`
	Digest       string `json:"digest"`
	Reason       string `json:"reason"`
	CoolingUntil string `json:"cooling_until,omitempty"`
	// short is Digest as the table shows it.
	short string
}

type takenOverOutput struct {
	Name    string `json:"name"`
	Retired bool   `json:"retired"`
	// Lock is the other lock file the entry is in (another environment's,
	// whose host is this one's now); "" for the previous lock.
	Lock  string       `json:"lock,omitempty"`
	Entry *imageOutput `json:"entry"`
}

type imageOutput struct {
	Image          string            `json:"image"`
	Tag            string            `json:"tag,omitempty"`
	Tags           []string          `json:"tags,omitempty"`
	Digest         string            `json:"digest"`
	Version        string            `json:"version,omitempty"`
	Created        string            `json:"created,omitempty"`
	Platforms      map[string]string `json:"platforms,omitempty"`
	Source         string            `json:"source,omitempty"`
	Rule           string            `json:"rule,omitempty"`
	Reason         string            `json:"reason,omitempty"`
	AllowDowngrade string            `json:"allow_downgrade,omitempty"`
	Restore        string            `json:"restore,omitempty"`
	// Verified, Signer and Signature are the lock's verification lines.
	Verified  string `json:"verified,omitempty"`
	Signer    string `json:"signer,omitempty"`
	Signature string `json:"signature,omitempty"`
	// AllowUnverified is the reason the lock keeps an unverified image.
	AllowUnverified string `json:"allow_unverified,omitempty"`
	// Hosts are the runs_on hosts the entry was held against.
	Hosts []string `json:"hosts,omitempty"`
	// short is Digest as the table shows it.
	short string
}

type observationOutput struct {
	Host      string `json:"host"`
	Container string `json:"container"`
	State     string `json:"state"`
	Floor     bool   `json:"floor"`
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest,omitempty"`
	ImageID   string `json:"image_id,omitempty"`
	Version   string `json:"version,omitempty"`
	Created   string `json:"created,omitempty"`
	// Replicas and Pods are, on Kubernetes, how many pods of the workload
	// run this image and which: the plan shows them, the lock does not.
	Replicas int      `json:"replicas,omitempty"`
	Pods     []string `json:"pods,omitempty"`
	// short and shortID are Digest and ImageID as the table shows them.
	short, shortID string
}

type refusalOutput struct {
	Kind    string `json:"kind"`
	Rule    string `json:"rule"`
	Host    string `json:"host,omitempty"`
	Message string `json:"message"`
	// Advice is what the message says to write in the module, each piece
	// a goal and the attributes that reach it, in order.
	Advice []adviceOutput `json:"advice,omitempty"`
}

type adviceOutput struct {
	Goal string          `json:"goal,omitempty"`
	Set  []settingOutput `json:"set"`
}

type settingOutput struct {
	Attr  string `json:"attr"`
	Value string `json:"value"`
}

// The output types are built once from what resolve decided, digests
// in the short form the table shows (image.Short) beside the full ones
// the JSON has: the text renderers only lay out what they are given.

func lockImage(m *lock.Module) *imageOutput {
	if m == nil {
		return nil
	}
	return &imageOutput{Image: m.Image, Tag: m.Tag, Tags: m.Tags, Digest: m.Digest, Version: m.Version, Created: resolve.Created(m.Created),
		Platforms: m.Platforms, Source: string(m.Source), Rule: string(m.Rule), Reason: m.Reason, AllowDowngrade: m.AllowDowngrade, Restore: m.Restore,
		Verified: string(m.Verified), Signer: m.Signer, Signature: m.Signature, AllowUnverified: m.AllowUnverified, Hosts: m.Hosts,
		short: image.Short(m.Digest)}
}

func observation(o observe.Observation) observationOutput {
	return observationOutput{Host: o.Host, Container: o.Container, State: o.State, Floor: resolve.IsFloor(o),
		Tag: o.Image.Tag, Digest: o.Image.Digest, ImageID: o.Image.ImageID, Version: o.Image.VersionLabel(), Created: resolve.Created(o.Image.Created),
		Replicas: o.Replicas, Pods: o.Pods, short: image.Short(o.Image.Digest), shortID: image.Short(o.Image.ImageID)}
}

// pinRef is a catalogue pin ("tag", "tag@digest" or "digest") as the
// table shows it.
func pinRef(pin string) string {
	tag, digest, _ := strings.Cut(pin, "@")
	if strings.HasPrefix(tag, "sha256:") {
		tag, digest = "", tag
	}
	return refText(tag, image.Short(digest))
}

func planReport(p *resolve.Plan, g *globalOptions, command string, changed, written, only bool) planOutput {
	out := planOutput{Schema: JSONSchema, Command: command, Catalogue: g.Catalogue, Lock: g.Lock, Changed: changed, Written: written, Modules: []moduleOutput{}}
	for _, d := range p.Decisions {
		if d.Unselected() {
			continue // "pin resolve MODULE…": the plan is about the named modules
		}
		m := moduleOutput{Name: d.Module.Name, Policy: string(d.Module.Policy), Pin: d.Module.Pin.Text, Change: string(d.Change()),
			Old: lockImage(d.Old), New: lockImage(d.New()), Missing: d.Missing, Skew: d.Skew, Observations: []observationOutput{}, pinRef: pinRef(d.Module.Pin.Text)}
		for _, o := range d.Observations {
			m.Observations = append(m.Observations, observation(o))
		}
		if r := d.Refusal(); r != nil {
			m.Refusal = &refusalOutput{Kind: string(r.Kind), Rule: string(r.Order.Rule), Host: r.Floor.Observation.Host, Message: r.Error()}
			for _, a := range r.Advice {
				ao := adviceOutput{Goal: a.Goal}
				for _, st := range a.Set {
					ao.Set = append(ao.Set, settingOutput{Attr: st.Attr, Value: st.Value})
				}
				m.Refusal.Advice = append(m.Refusal.Advice, ao)
			}
		}
		if d.Err() != nil {
			m.Error = d.Err().Error()
		}
		if r := d.Repository; r != nil {
			m.Repository = &repositoryOutput{Catalogue: r.Catalogue, Locked: r.Locked, Why: r.Why}
		}
		m.changed = entryChanges(d.Old, d.New())
		switch {
		case d.New() == nil:
		case d.Kept() != nil:
			m.Won = wonPreviousLock
			if d.Kept().Name != d.Module.Name {
				m.KeptFrom = d.Kept().Name
			}
		default:
			m.Won = string(d.New().Source)
		}
		for _, e := range d.TakenOver {
			m.TakenOver = append(m.TakenOver, takenOverOutput{Name: e.Name, Retired: p.WasRetired(e), Lock: p.Elsewhere(e), Entry: lockImage(e)})
		}
		for _, sk := range d.Skipped {
			m.Skipped = append(m.Skipped, skippedOutput{Tag: sk.Image.Tag, Digest: sk.Image.Digest, Reason: sk.Why, CoolingUntil: lock.FormatTime(sk.CoolingUntil), short: image.Short(sk.Image.Digest)})
		}
		out.Modules = append(out.Modules, m)
	}
	// What becomes of the entries of modules no longer in the catalogue:
	// taken over, or kept as retired entries (shown unless MODULE
	// arguments named others).
	for _, t := range p.TakenOver {
		out.Modules = append(out.Modules, moduleOutput{Name: t.Entry.Name, Policy: string(t.Entry.Policy), Change: string(resolve.ChangeTakenOver), Old: lockImage(t.Entry),
			Observations: []observationOutput{}, TakenOverBy: t.By,
			Why: fmt.Sprintf("module %s takes over its floor: the entry leaves the lock", joinAnd(quoteAll(t.By)))})
	}
	for _, r := range p.Retired {
		if only && !r.Now {
			continue
		}
		ch := resolve.ChangeRetired
		if r.Now {
			ch = resolve.ChangeRetire
		}
		out.Modules = append(out.Modules, moduleOutput{Name: r.Entry.Name, Policy: string(r.Entry.Policy), Change: string(ch), Old: lockImage(r.Entry), New: lockImage(r.Entry),
			Observations: []observationOutput{}, Why: retiredWhy(r.Entry)})
	}
	return out
}

// wonPreviousLock is "won" of a module whose previous entry was kept.
const wonPreviousLock = "previous-lock"

// wonText says in words what won: "running", "the previous lock", "the
// previous lock's entry for module "forge"".
func wonText(m moduleOutput) string {
	switch {
	case m.Won == wonPreviousLock && m.KeptFrom != "":
		return fmt.Sprintf("the previous lock's entry for module %q", m.KeptFrom)
	case m.Won == wonPreviousLock:
		return "the previous lock"
	case m.Won != "":
		return m.Won
	}
	return m.New.Source
}

// retiredWhy says what a retired entry is for.
func retiredWhy(e *lock.Module) string {
	var held []string
	for _, o := range e.Observed {
		held = append(held, o.Host+"/"+o.Container)
	}
	what := "its repository on " + strings.Join(e.Hosts, ", ")
	switch {
	case len(held) > 0:
		what = "what it ran (" + strings.Join(slices.Compact(held), ", ") + ")"
	case len(e.Hosts) == 0:
		what = "its name"
	}
	return fmt.Sprintf("module %q is no longer in the catalogue: its entry stays in the lock (retired %q), a floor for the module that takes over %s, until one does; a rename or removal frees no floor. To forget it on purpose, the module taking it over writes allow_downgrade = \"<why>\"", e.Name, e.Name, what)
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSONControls(buf.Bytes()))
	return err
}

// escapeJSONControls escapes, as \uXXXX, what encoding/json leaves raw but
// a terminal may act on (terminalUnsafe): DEL, the C1 controls and the
// bidirectional formatting characters; encoding/json escapes the rest
// itself, and the newlines between tokens stay. They can only stand
// inside strings, where the escape means the same character.
func escapeJSONControls(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != '\n' && terminalUnsafe(r) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, "\\u%04x", r)
		} else if out != nil {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

func render(s streams, format string, out planOutput) error {
	if format == "json" {
		return writeJSON(s.Out, out)
	}
	bw := bufio.NewWriter(s.Out)
	ls := &lineSanitizer{w: bw}
	if len(out.Environments) == 0 {
		writePlanTable(ls, out)
	}
	for i, p := range envPlans(out) {
		if i > 0 {
			fmt.Fprintln(ls)
		}
		fmt.Fprint(ls, envHeader(p.Environment, p.Lock))
		writePlanTable(ls, p)
	}
	if err := ls.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// writePlanTable renders the plan for people: one paragraph per module.
func writePlanTable(w io.Writer, out planOutput) {
	counts := map[string]int{}
	for _, m := range out.Modules {
		counts[m.Change]++
		fmt.Fprintf(w, "%s (%s): %s%s\n", m.Name, m.Policy, m.Change, changeText(m))
		if m.Pin != "" {
			fmt.Fprintf(w, "  pin      %s\n", m.pinRef)
		}
		fmt.Fprintf(w, "  locked   %s\n", describeLocked(m.Old))
		for _, o := range m.Observations {
			label, note := "running", ""
			switch {
			case o.State == observe.StateScaledToZero:
				label, note = "template", " (scaled to zero: nothing runs it, not a floor)"
			case strings.HasPrefix(o.State, observe.EphemeralPrefix):
				note = " (ephemeral debug container: not a floor)"
			case !o.Floor:
				label, note = "created", " (created, never started: not a floor)"
			case o.State != "" && !(host.Container{State: o.State}).Running():
				label, note = "stopped", " ("+o.State+": a floor all the same)"
			}
			fmt.Fprintf(w, "  %-8s %s %s%s%s\n", label, o.Host+"/"+o.Container, replicasText(o), describeSeen(o), note)
			if len(o.Pods) > 0 {
				fmt.Fprintf(w, "  %-8s %s\n", "", "pods "+strings.Join(o.Pods, ", "))
			}
		}
		for _, miss := range m.Missing {
			fmt.Fprintf(w, "  running  %s: not found\n", miss)
		}
		for _, t := range m.TakenOver {
			what := fmt.Sprintf("module %q", t.Name)
			if t.Retired {
				what += " (retired)"
			}
			if t.Lock != "" {
				what += " in " + sanitize(t.Lock) + " (it ran on a host that is this environment's now)"
			}
			fmt.Fprintf(w, "  inherits %s %s: its floor is this module's\n", what, describeLocked(t.Entry))
		}
		for _, sk := range m.Skipped {
			if sk.CoolingUntil != "" {
				fmt.Fprintf(w, "  skipped  %s: %s\n", refText(sk.Tag, sk.short), sk.Reason)
				continue
			}
			fmt.Fprintf(w, "  skipped  %s: %s, so its version is unknown\n", refText(sk.Tag, sk.short), sk.Reason)
		}
		switch {
		case m.Error != "":
			fmt.Fprintf(w, "  error    %s\n", m.Error)
		case m.Refusal != nil:
			fmt.Fprintf(w, "  refused  %s (the reason follows the plan)\n", refusalWords(m.Refusal.Kind))
		case m.Why != "":
			fmt.Fprintf(w, "  why      %s\n", m.Why)
		case m.New != nil:
			fmt.Fprintf(w, "  new      %s\n", describeLocked(m.New))
			won := wonText(m)
			if m.New.Rule != "" {
				won += ", ordered by " + m.New.Rule
			}
			fmt.Fprintf(w, "  won      %s\n", won)
			fmt.Fprintf(w, "  why      %s\n", m.New.Reason)
		}
		if m.Repository != nil {
			fmt.Fprintf(w, "  image    %s\n", m.Repository.Why)
		}
		if m.Skew {
			fmt.Fprintf(w, "  skew     hosts run different images\n")
		}
		fmt.Fprintln(w)
	}
	var parts []string
	for _, c := range []string{"add", "update", "unchanged", "remove", "retire", "retired", "taken-over", "skipped", "refused", "error"} {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	fmt.Fprintf(w, "Plan: %s.\n", strings.Join(parts, ", "))
	switch {
	case out.Written:
		fmt.Fprintf(w, "Wrote %s.\n", out.Lock)
	case !out.Changed && counts["error"]+counts["refused"] > 0:
		fmt.Fprintf(w, "%s left unchanged: %s could not be decided (see below).\n", out.Lock, plural(counts["error"]+counts["refused"], "module"))
	case !out.Changed:
		fmt.Fprintf(w, "%s is up to date.\n", out.Lock)
	default:
		fmt.Fprintf(w, "%s not written.\n", out.Lock)
	}
}

func describeLocked(i *imageOutput) string {
	if i == nil {
		return "(none)"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s", refText(i.Tag, i.short), facts(i.Version, i.Created)))
}

func describeSeen(o observationOutput) string {
	ref := refText(o.Tag, o.short)
	if o.Digest == "" && o.ImageID != "" {
		ref = refText(o.Tag, "") + " image ID " + o.shortID + " (no registry digest)"
	}
	return strings.TrimSpace(ref + " " + facts(o.Version, o.Created))
}

// replicasText is "2 × " for replicas of a workload, "" off Kubernetes.
func replicasText(o observationOutput) string {
	if o.Replicas == 0 {
		return ""
	}
	return fmt.Sprintf("%d × ", o.Replicas)
}

// refText is "tag@sha256:0123456789ab", of a tag and a short digest;
// either alone when the other is "".
func refText(tag, short string) string {
	switch {
	case tag != "" && short != "":
		return tag + "@" + short
	case short != "":
		return short
	}
	return tag
}

func facts(version, created string) string {
	var f []string
	if version != "" {
		f = append(f, "version "+version)
	}
	if created != "" {
		if t, err := time.Parse(time.RFC3339, created); err == nil {
			created = t.Format("2006-01-02")
		}
		f = append(f, "built "+created)
	}
	if len(f) == 0 {
		return ""
	}
	return "(" + strings.Join(f, ", ") + ")"
}

// textOnly refuses the global --format json for a command that prints
// text only (every --format json output has a schema: a command without
// one does not pretend), saying what to use instead.
func textOnly(g *globalOptions, command, instead string) error {
	if g.Format != "json" {
		return nil
	}
	return withCode(exitInput, fmt.Errorf("pin %s prints text only, and has no --format json: leave out --format json, and %s", command, instead))
}
