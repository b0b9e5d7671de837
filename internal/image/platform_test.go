package image

import (
	"errors"
	"strings"
	"testing"
)

func TestMatchesPlatform(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		ok         bool
	}{
		{"linux/amd64", "linux/amd64", true},
		{"linux/arm64/v8", "linux/arm64", true},
		{"linux/arm64", "linux/arm64/v8", true}, // v8 is arm64's default
		{"linux/aarch64", "linux/arm64", true},
		{"linux/x86_64", "linux/amd64", true},
		{"linux/arm/v6", "linux/arm/v7", false},
		{"linux/arm/v6", "linux/arm", true},
		{"linux/arm64", "linux/amd64", false},
		{"windows/amd64", "linux/amd64", false},
	} {
		if got := MatchesPlatform(tc.have, tc.want); got != tc.ok {
			t.Errorf("MatchesPlatform(%s, %s) = %v", tc.have, tc.want, got)
		}
	}
}

// TestCheckIndex: one platform listed twice is malformed, whatever its
// spelling; Windows builds of several os.versions are not.
func TestCheckIndex(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	for _, tc := range []struct {
		name    string
		entries []PlatformManifest
		bad     bool
	}{
		{"distinct", []PlatformManifest{{Platform: "linux/amd64", Digest: d("a")}, {Platform: "linux/arm64/v8", Digest: d("b")}}, false},
		{"twice", []PlatformManifest{{Platform: "linux/amd64", Digest: d("a")}, {Platform: "linux/amd64", Digest: d("b")}}, true},
		{"spelt twice", []PlatformManifest{{Platform: "linux/arm64", Digest: d("a")}, {Platform: "linux/arm64/v8", Digest: d("b")}}, true},
		{"windows builds", []PlatformManifest{{Platform: "windows/amd64", OSVersion: "10.0.17763.1", Digest: d("a")}, {Platform: "windows/amd64", OSVersion: "10.0.20348.1", Digest: d("b")}}, false},
	} {
		err := CheckIndex(tc.entries)
		if (err != nil) != tc.bad || (err != nil && !errors.Is(err, ErrMalformed)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
