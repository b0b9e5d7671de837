package propose

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// Trailers of pin's commits: the group and the new lock's hash. A branch
// whose commit lacks them is not pin's.
const (
	trailerGroup = "Pin-Group"
	trailerLock  = "Pin-Lock"
)

// markerPrefix starts the hidden marker of a request's body.
const markerPrefix = "<!-- pin:propose "

// marker is p's hidden marker: its group, base and new lock.
func marker(p *Proposal) string {
	return fmt.Sprintf("%sgroup=%s base=%s lock=%s -->", markerPrefix, p.Group, p.Base, p.Lock)
}

var markerRE = regexp.MustCompile(`<!-- pin:propose group=(\S+) base=(\S+) lock=(\S+) -->`)

// markedFor reports whether body carries the marker of group and base,
// and the lock hash it names.
func markedFor(body, group, base string) (lock string, ok bool) {
	for _, m := range markerRE.FindAllStringSubmatch(body, -1) {
		if m[1] == group && m[2] == base {
			return m[3], true
		}
	}
	return "", false
}

// title is p's one-line summary.
func title(p *Proposal) string {
	names := make([]string, 0, len(p.Modules))
	for _, m := range p.Modules {
		names = append(names, m.Name)
	}
	if len(p.Modules) == 1 {
		m := p.Modules[0]
		switch {
		case m.To == nil:
			return fmt.Sprintf("pin: retire %s, gone from the catalogue", m.Name)
		case m.Verdict == "held":
			return fmt.Sprintf("pin: lock %s at %s, what runs", m.Name, m.To.Label())
		}
		return fmt.Sprintf("pin: update %s to %s", m.Name, m.To.Label())
	}
	if len(names) > 3 {
		return fmt.Sprintf("pin: update %s and %d more modules", strings.Join(names[:2], ", "), len(names)-2)
	}
	return "pin: update " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Label names an image in a title, a cell or a line for people: its
// version or tag, else its build date, else its digest; "(none)" for nil.
func (i *Image) Label() string {
	switch {
	case i == nil:
		return "(none)"
	case i.Version != "":
		return i.Version
	case i.Tag != "" && i.Created != "":
		return i.Tag + " of " + i.Created[:10]
	case i.Tag != "":
		return i.Tag
	case i.Created != "":
		return "the build of " + i.Created[:10]
	}
	return short(i.Digest)
}

// cell is an image in the table: version, short digest, build date.
func cell(i *Image) string {
	if i == nil {
		return "(none)"
	}
	s := i.Label()
	if i.Digest != "" && s != short(i.Digest) {
		s += " `" + short(i.Digest) + "`"
	}
	if i.Created != "" && !strings.Contains(s, i.Created[:10]) {
		s += " (" + i.Created[:10] + ")"
	}
	return s
}

// esc makes s safe in a table cell: no pipe ends the cell, no line break
// ends the row.
func esc(s string) string {
	return strings.NewReplacer("|", `\|`, "\r", "", "\n", " ", "<!--", "&lt;!--").Replace(s)
}

// markdown is p's body for a reviewer, without the marker.
func markdown(p *Proposal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pin proposes the lock `pin resolve` writes for %s, checked against every host with the cutover gate of `pin plan`.\n\n", moduleWord(len(p.Modules)))
	b.WriteString("| module | policy | runs | from → to | verdict | signature |\n|---|---|---|---|---|---|\n")
	for _, m := range p.Modules {
		var runs []string
		for _, r := range m.Running {
			v := r.Version
			if v == "" {
				v = r.Tag
			}
			s := r.Host + "/" + r.Container
			if v != "" {
				s += " " + v
			}
			if r.Digest != "" {
				s += " `" + short(r.Digest) + "`"
			}
			runs = append(runs, esc(s))
		}
		if len(runs) == 0 {
			runs = []string{"nothing"}
		}
		sig := "—"
		if m.Signature != nil {
			sig = esc(m.Signature.Method + ": " + m.Signature.Signer)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s → %s | %s | %s |\n", esc(m.Name), esc(m.Policy), strings.Join(runs, "<br>"), esc(cell(m.From)), esc(cell(m.To)), m.Verdict, sig)
	}
	b.WriteString("\n### Why\n\n")
	for _, m := range p.Modules {
		fmt.Fprintf(&b, "- **%s**", esc(m.Name))
		if m.Won != "" {
			fmt.Fprintf(&b, " (%s won", m.Won)
			if m.Rule != "" {
				fmt.Fprintf(&b, ", ordered by %s", m.Rule)
			}
			b.WriteString(")")
		}
		fmt.Fprintf(&b, ": %s\n", oneLineText(m.Why))
		if len(m.Floors) > 0 {
			var fs []string
			for _, f := range m.Floors {
				fs = append(fs, f.Where+": "+f.Image)
			}
			fmt.Fprintf(&b, "  - floors: %s\n", oneLineText(strings.Join(fs, "; ")))
		}
		if len(m.TakesOver) > 0 {
			fmt.Fprintf(&b, "  - takes over the entry of %s (no longer a module of its own): it leaves the lock, its floor now this module's\n", esc(strings.Join(m.TakesOver, ", ")))
		}
		if len(m.Cutover) > 0 {
			var cs []string
			for _, c := range m.Cutover {
				cs = append(cs, c.Host+"/"+c.Container+" "+c.Verdict)
			}
			fmt.Fprintf(&b, "  - deploying it: %s\n", oneLineText(strings.Join(cs, ", ")))
		}
	}
	if len(p.Refused) > 0 {
		b.WriteString("\n### Refused, not changed\n\n")
		for _, r := range p.Refused {
			fmt.Fprintf(&b, "- **%s** (%s):\n\n```text\n%s\n```\n\n", esc(r.Module), r.Kind, strings.ReplaceAll(strings.TrimSpace(r.Message), "```", "'''"))
		}
	}
	if len(p.Findings) > 0 {
		b.WriteString("\n### Exported references corrected\n\n")
		for _, f := range p.Findings {
			fmt.Fprintf(&b, "- %s\n", oneLineText(f))
		}
	}
	b.WriteString("\n### Files\n\n")
	for _, f := range p.Files {
		fmt.Fprintf(&b, "- `%s`\n", f)
	}
	return b.String()
}

func moduleWord(n int) string {
	if n == 1 {
		return "1 module"
	}
	return fmt.Sprintf("%d modules", n)
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "<!--", "&lt;!--")), " ")
}

// message renders p's commit message and request body: pin's, or tmpl's
// over p (its first line the title, the rest the body). The message ends
// with pin's trailers (and Gerrit's Change-Id, when changeID is not "");
// the body with the marker.
func message(p *Proposal, tmpl *template.Template, changeID string) (title, msg, body string, err error) {
	title, text := p.Title, markdown(p)
	if p.Promotion != nil {
		text = promotionMarkdown(p)
	}
	if tmpl != nil {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, p); err != nil {
			return "", "", "", fmt.Errorf("%w: the message template: %w", ErrBadInput, err)
		}
		s := strings.ReplaceAll(b.String(), "\r\n", "\n")
		first, rest, _ := strings.Cut(strings.TrimLeft(s, "\n"), "\n")
		if title = strings.TrimSpace(first); title == "" {
			return "", "", "", fmt.Errorf("%w: the message template wrote no title (its first line is empty)", ErrBadInput)
		}
		text = strings.Trim(rest, "\n") + "\n"
	}
	var m strings.Builder
	fmt.Fprintf(&m, "%s\n\n%s\n%s: %s\n%s: %s\n", title, strings.TrimRight(text, "\n")+"\n", trailerGroup, p.Group, trailerLock, p.Lock)
	if changeID != "" {
		fmt.Fprintf(&m, "Change-Id: %s\n", changeID)
	}
	// The request's body says more than the commit: what changed
	// upstream (read from registries and the forge, which may change
	// between runs of the same result) and whether automerge is on.
	body = strings.TrimRight(text, "\n") + "\n"
	if tmpl == nil {
		body += upstreamMarkdown(p)
	}
	body += handoverMarkdown(p)
	return title, m.String(), body + "\n" + marker(p) + "\n", nil
}

// pins reports whether a commit message is one pin wrote: it ends with
// pin's trailers.
func pins(msg string) bool {
	group, lock := false, false
	sc := bufio.NewScanner(strings.NewReader(msg))
	for sc.Scan() {
		k, _, ok := strings.Cut(sc.Text(), ": ")
		group = group || (ok && k == trailerGroup)
		lock = lock || (ok && k == trailerLock)
	}
	return group && lock
}
