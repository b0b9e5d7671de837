package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command reference, docs/cli/pin_<command>.md, is generated from the
// cobra tree: one page per command, each flag on the page of the command
// that defines it (a global flag on pin.md alone, not on every page that
// inherits it). Regenerate it with
//
//	go test ./cmd/pin -run TestCLIDocs -update

const cliDocsDir = "docs/cli"

// cliTree is the command tree as a user meets it: with the completion
// command and the --version flag that cobra adds when the CLI runs.
func cliTree() *cobra.Command {
	root := newRootCmd(streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, time.Now)
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	return root
}

// documented is every command that has a page: the available ones (cobra's
// help command and hidden or deprecated commands have none).
func documented(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			out = append(out, documented(c)...)
		}
	}
	return out
}

// docPage names a command's page: pin.md, pin_resolve.md, pin_observe_x.md.
func docPage(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// ownFlags are the flags a command defines (its local and persistent
// ones, not those it inherits), hidden ones left out.
func ownFlags(c *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			fs.AddFlag(f)
		}
	})
	return fs
}

// inherits reports whether an ancestor of c defines a persistent flag name.
func inherits(c *cobra.Command, name string) bool {
	for a := c.Parent(); a != nil; a = a.Parent() {
		if a.PersistentFlags().Lookup(name) != nil {
			return true
		}
	}
	return false
}

// genCLIDocs renders every page, by file name.
func genCLIDocs(root *cobra.Command) map[string][]byte {
	pages := map[string][]byte{}
	for _, c := range documented(root) {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s\n\n", c.CommandPath())
		fmt.Fprintf(&b, "<!-- Generated from the code by `go test ./cmd/pin -run TestCLIDocs -update`; do not edit. -->\n\n")
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Short))
		if long := strings.TrimSpace(c.Long); long != "" && long != strings.TrimSpace(c.Short) {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", long)
		}
		if c.Runnable() {
			fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
		}
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, "Aliases: %s\n\n", strings.Join(c.Aliases, ", "))
		}
		if ex := strings.TrimRight(c.Example, " \n"); ex != "" {
			fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", ex)
		}
		if fs := ownFlags(c); fs.HasFlags() {
			title := "Flags"
			if !c.HasParent() {
				title = "Global flags"
			}
			fmt.Fprintf(&b, "## %s\n\n```\n%s```\n\n", title, fs.FlagUsages())
			fs.VisitAll(func(f *pflag.Flag) {
				if inherits(c, f.Name) {
					fmt.Fprintf(&b, "`--%s` here is this command's own: it replaces the global flag of that name.\n\n", f.Name)
				}
			})
		}
		if c.HasParent() {
			fmt.Fprintf(&b, "Every command also takes the [global flags](%s#global-flags), and `-h`, `--help`.\n\n", docPage(c.Root()))
		} else {
			fmt.Fprintf(&b, "Every command also takes `-h`, `--help`: its usage.\n\n")
		}
		var subs []*cobra.Command
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
				subs = append(subs, s)
			}
		}
		if len(subs) > 0 {
			fmt.Fprintf(&b, "## Commands\n\n")
			for _, s := range subs {
				fmt.Fprintf(&b, "- [%s](%s): %s\n", s.CommandPath(), docPage(s), strings.TrimSpace(s.Short))
			}
			fmt.Fprintf(&b, "\n")
		}
		if c.HasParent() {
			p := c.Parent()
			fmt.Fprintf(&b, "## See also\n\n- [%s](%s): %s\n", p.CommandPath(), docPage(p), strings.TrimSpace(p.Short))
		}
		pages[docPage(c)] = append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
	}
	return pages
}

// TestCLIDocs: docs/cli holds exactly the pages the code generates, byte
// for byte; -update rewrites them (and removes pages of commands gone).
func TestCLIDocs(t *testing.T) {
	dir := filepath.Join(repoRoot, cliDocsDir)
	pages := genCLIDocs(cliTree())
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, p := range old {
			if _, ok := pages[filepath.Base(p)]; !ok {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, b := range pages {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	have, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range have {
		if _, ok := pages[filepath.Base(p)]; !ok {
			t.Errorf("%s/%s documents no command of the code; run: go test ./cmd/pin -run TestCLIDocs -update", cliDocsDir, filepath.Base(p))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s/%s is missing; run: go test ./cmd/pin -run TestCLIDocs -update", cliDocsDir, name)
			continue
		}
		if diff := cmp.Diff(string(pages[name]), string(got)); diff != "" {
			t.Errorf("%s/%s differs from the code (-generated +committed); run: go test ./cmd/pin -run TestCLIDocs -update\n%s", cliDocsDir, name, diff)
		}
	}
}

// flagLine matches a flag's line in a page's flag block: "  -v, --verbose …"
// or "      --lock string …", capturing the long name.
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([\w-]+)`)

// pageFlags reads the flags a committed page documents: the lines of its
// "## Flags" or "## Global flags" block.
func pageFlags(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, cliDocsDir, page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for l := range strings.Lines(string(b)) {
		l = strings.TrimRight(l, "\n")
		switch {
		case l == "## Flags" || l == "## Global flags":
			in = true
		case in && strings.HasPrefix(l, "## "):
			in = false
		case in:
			if m := flagLine.FindStringSubmatch(l); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// TestCLIDocsEveryFlagOnce: every flag a command takes, its own or
// inherited, is documented exactly once on the committed pages (read as
// text) of the command and its ancestors: on the page of the command that
// defines it. A page documents only the flags its command defines (a
// command's own flag that shadows an inherited one of the same name is
// its own).
func TestCLIDocsEveryFlagOnce(t *testing.T) {
	root := cliTree()
	onPage := map[string][]string{}
	for _, c := range documented(root) {
		onPage[docPage(c)] = pageFlags(t, docPage(c))
	}
	for _, c := range documented(root) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			var where []string
			for a := c; a != nil; a = a.Parent() {
				if !defines(a, f) {
					continue // another command's flag of that name, or none
				}
				for range countOf(onPage[docPage(a)], f.Name) {
					where = append(where, docPage(a))
				}
			}
			if len(where) != 1 {
				t.Errorf("%s --%s: documented %d times on the pages of its line, want once: %v", c.CommandPath(), f.Name, len(where), where)
			}
		})
		for _, name := range onPage[docPage(c)] {
			if f := c.Flags().Lookup(name); f == nil || !defines(c, f) {
				t.Errorf("%s documents --%s, which %s does not define", docPage(c), name, c.CommandPath())
			}
		}
	}
}

// defines reports whether c itself defines f: as a persistent flag, or as
// a local one.
func defines(c *cobra.Command, f *pflag.Flag) bool {
	return c.PersistentFlags().Lookup(f.Name) == f || c.LocalNonPersistentFlags().Lookup(f.Name) == f
}

func countOf(list []string, s string) int {
	return len(list) - len(slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == s }))
}
