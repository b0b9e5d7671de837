package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/pin-tool/pin", Version: "v0.3.0"}},
			"pin v0.3.0, built with go1.26.8"},
		{"a checkout with VCS stamping", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/pin-tool/pin", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "d34efb305674747d5fb16a7e2b5a8a09597f7723"},
				{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"pin (devel) revision d34efb305674747d5fb16a7e2b5a8a09597f7723 (2026-12-01T10:00:00Z, modified), built with go1.26.8"},
		{"a clean checkout", debug.BuildInfo{Main: debug.Module{Path: "github.com/pin-tool/pin"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}},
			"pin (devel) revision abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(&tc.bi).String(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// "pin --version" and "pin version" print the same line, read from this
// binary's build information, without a catalogue.
func TestVersionCommands(t *testing.T) {
	dir := t.TempDir() // no catalogue here: version must not need one
	flag := pin(t, dir, "--version")
	cmd := pin(t, dir, "version")
	if flag.code != 0 || cmd.code != 0 {
		t.Fatalf("exit %d and %d; stderr %q %q", flag.code, cmd.code, flag.stderr, cmd.stderr)
	}
	want := readBuildVersion().String() + "\n"
	if flag.stdout != want || cmd.stdout != want {
		t.Errorf("--version %q, version %q, want %q", flag.stdout, cmd.stdout, want)
	}
	bi, _ := debug.ReadBuildInfo()
	if !strings.HasPrefix(want, "pin ") || !strings.Contains(want, bi.GoVersion) {
		t.Errorf("version line %q does not name pin and %s", want, bi.GoVersion)
	}
}
