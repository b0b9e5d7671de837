package published

import (
	"encoding/base64"
	"testing"
)

// TestOwnedFormats: what pin observe may replace without --force is an
// observation or a signature by its format; a catalogue, a lock or a
// user's JSON is neither.
func TestOwnedFormats(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString([]byte("a signature")) + "\n"
	for _, tc := range []struct {
		name     string
		b        string
		obs, sig bool
	}{
		{"observation", "{\n  \"pin_observation\": 1,\n  \"host\": \"h1\"\n}\n", true, false},
		{"signature", sig, false, true},
		{"catalogue", "host \"h1\" {\n  snapshot = \"h1.json\"\n}\n", false, false},
		{"lock", "# This file is maintained by pin.\nhosts = [\"h1\"]\n", false, false},
		{"user's JSON", "{\"mine\": true}\n", false, false},
		{"two lines of base64", sig + sig, false, false},
	} {
		if got := IsObservation([]byte(tc.b)); got != tc.obs {
			t.Errorf("%s: IsObservation = %v", tc.name, got)
		}
		if got := IsSignature([]byte(tc.b)); got != tc.sig {
			t.Errorf("%s: IsSignature = %v", tc.name, got)
		}
	}
}
