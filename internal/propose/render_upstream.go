package propose

import (
	"fmt"
	"html"
	"net/url"
	"strings"
)

// upstreamMarkdown is the body's section of what changed upstream, ""
// when no module's images say anything of it. Every label value is
// escaped as text (or, an http(s) address, as a link's destination):
// labels are their builders' claims, and none may write Markdown or
// HTML into the body.
func upstreamMarkdown(p *Proposal) string {
	var b strings.Builder
	for _, m := range p.Modules {
		u := m.Upstream
		if u == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n### What changed upstream\n\n")
			b.WriteString("From the images' labels (`org.opencontainers.image.*`): their builders' claims, shown as they are, checked against nothing.\n")
		}
		fmt.Fprintf(&b, "\n**%s**\n\n", mdText(m.Name))
		if u.To.Source != "" {
			fmt.Fprintf(&b, "- source: %s (label `source` of the new image)\n", mdLink(u.To.Source, u.To.Source))
		}
		if u.moved() {
			fmt.Fprintf(&b, "- the source moved: the old image's `source` label names %s; no compare link\n", mdLink(u.From.Source, u.From.Source))
		}
		switch u.CompareBy {
		case "revision":
			fmt.Fprintf(&b, "- compare: %s (the `revision` labels of the old and new images)\n", mdLink(shortRev(u.From.Revision)+"..."+shortRev(u.To.Revision), u.Compare))
		case "version":
			fmt.Fprintf(&b, "- compare: %s (the two versions as tags)\n", mdLink(m.From.Label()+"..."+m.To.Label(), u.Compare))
		}
		if u.From != nil && (u.From.Version != "" || u.To.Version != "") && u.From.Version != u.To.Version {
			fmt.Fprintf(&b, "- version: %s → %s (the `version` labels)\n", orNone(u.From.Version), orNone(u.To.Version))
		}
		if u.To.URL != "" {
			fmt.Fprintf(&b, "- url: %s (label `url` of the new image)\n", mdLink(u.To.URL, u.To.URL))
		}
		if u.To.Documentation != "" {
			fmt.Fprintf(&b, "- documentation: %s (label `documentation` of the new image)\n", mdLink(u.To.Documentation, u.To.Documentation))
		}
		if u.Problem != "" {
			fmt.Fprintf(&b, "- not read: %s\n", mdText(u.Problem))
		}
		if u.ReleasesFrom == "" {
			continue
		}
		if len(u.Releases) == 0 {
			fmt.Fprintf(&b, "- release notes: no release between the two versions in the releases of %s\n", mdText(u.ReleasesFrom))
			continue
		}
		fmt.Fprintf(&b, "- release notes of %d release(s), from the releases of %s (the forge pin proposes to)", len(u.Releases), mdText(u.ReleasesFrom))
		if u.More != "" {
			fmt.Fprintf(&b, ", cut to fit: %s", mdLink("every release", u.More))
		}
		b.WriteString(":\n")
		for _, r := range u.Releases {
			summary := r.Tag
			if r.Name != "" && r.Name != r.Tag {
				summary += ": " + r.Name
			}
			fmt.Fprintf(&b, "\n<details><summary>%s</summary>\n\n", html.EscapeString(oneLineText(summary)))
			if r.Notes != "" {
				for _, l := range strings.Split(r.Notes, "\n") {
					b.WriteString(strings.TrimRight("> "+html.EscapeString(l), " ") + "\n")
				}
				b.WriteString("\n")
			}
			if r.Cut {
				fmt.Fprintf(&b, "%s\n\n", mdLink("the rest of the notes", r.URL))
			} else if r.URL != "" {
				fmt.Fprintf(&b, "%s\n\n", mdLink("the release", r.URL))
			}
			b.WriteString("</details>\n")
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return mdText(s)
}

// shortRev is a commit hash shortened, any other revision as it is.
func shortRev(s string) string {
	if len(s) >= 40 && strings.Trim(s, "0123456789abcdef") == "" {
		return s[:12]
	}
	return s
}

// mdText is s as Markdown text that shows s and does nothing else: every
// ASCII punctuation character backslash-escaped (no emphasis, link, code
// span, table cell, HTML tag, entity or autolink starts), line breaks
// and control characters as spaces.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteByte(' ')
		case r < 0x80 && strings.ContainsRune("\\`*_{}[]()#+-.!|<>~&\"'$:;=@%^/?,", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdLink is a link to raw showing text, when raw is an http(s) address;
// else text alone, as text. Its destination has every character that
// could end it percent-encoded.
func mdLink(text, raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return mdText(text) + " (not an http(s) address)"
	}
	u.User = nil
	dest := strings.NewReplacer("(", "%28", ")", "%29", "<", "%3C", ">", "%3E", " ", "%20", "\"", "%22", "'", "%27", "`", "%60", "\\", "%5C", "[", "%5B", "]", "%5D", "|", "%7C").Replace(u.String())
	return "[" + mdText(text) + "](" + dest + ")"
}
