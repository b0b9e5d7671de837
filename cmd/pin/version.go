package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is what "pin version" prints: the main module's version
// ("v0.3.0" when installed with go install …@v0.3.0; built from a git
// checkout, the pseudo-version Go stamps from the revision, such as
// v0.0.0-20261207211500-0123456789ab+dirty; "(devel)" when the build
// recorded no version, as with -buildvcs=false) and, when the build
// recorded it, the VCS revision, its time and whether the tree was
// modified.
type buildVersion struct {
	Module   string
	Version  string
	Revision string
	Time     string
	Modified bool
	Go       string
}

// readBuildVersion reads the running binary's build information. A binary
// built without module support (never, with go build) says "unknown".
func readBuildVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{Module: "github.com/pin-tool/pin", Version: "unknown"}
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// noRevision says why a build from a checkout names no revision, and
// what records one. Go stamps a binary with its VCS information only when
// go build (not go run, nor go test) builds it inside a git clone: a
// git worktree, whose .git is a file, is not recognised, and
// -buildvcs=false (in GOFLAGS too) turns it off.
const noRevision = "no revision: built without VCS information (by go run, with -buildvcs=false, or outside a git clone; a git worktree does not count): " +
	"go build -buildvcs=true ./cmd/pin in a git clone records it"

// String is the one line "pin --version" and "pin version" print:
// "pin v0.3.0" or "pin (devel) revision 0123abcd… (2026-12-01T10:00:00Z,
// modified)", then the Go version. A devel build without a revision says
// why it has none.
func (v buildVersion) String() string {
	s := "pin " + v.Version
	if v.Revision != "" {
		s += " revision " + v.Revision
		var extra []string
		if v.Time != "" {
			extra = append(extra, v.Time)
		}
		if v.Modified {
			extra = append(extra, "modified")
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
	}
	if v.Go != "" {
		s += ", built with " + v.Go
	}
	if v.Version == "(devel)" && v.Revision == "" {
		s += "; " + noRevision
	}
	return s
}

// versionOutput is pin version --format json (docs/schema/version.schema.json).
type versionOutput struct {
	Schema   int    `json:"schema"`
	Command  string `json:"command"`
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go,omitempty"`
}

func newVersionCmd(g *globalOptions, s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print pin's version and the revision it was built from",
		Args:  cobra.NoArgs,
		// No catalogue is read: version works anywhere.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			v := readBuildVersion()
			switch g.Format {
			case "table":
				_, err := fmt.Fprintln(s.Out, v)
				return err
			case "json":
				return writeVersionJSON(s, v)
			}
			return withCode(exitInput, fmt.Errorf("--format %q: write table or json", g.Format))
		},
	}
}

func writeVersionJSON(s streams, v buildVersion) error {
	return writeJSON(s.Out, versionOutput{
		Schema: 1, Command: "version", Module: v.Module, Version: v.Version,
		Revision: v.Revision, Time: v.Time, Modified: v.Modified, Go: v.Go,
	})
}

// setVersion makes "pin --version" print what "pin version" prints.
func setVersion(root *cobra.Command) {
	root.Version = readBuildVersion().String()
	root.SetVersionTemplate("{{.Version}}\n")
}
