package catalogue

import "testing"

func TestNearRegistry(t *testing.T) {
	c := &Catalogue{Registries: []*Registry{{Host: "registry.example.org"}, {Host: "ghcr.io"}}}
	for host, want := range map[string]string{
		"registy.example.org":   "registry.example.org",
		"registry.example.com":  "", // three letters: another name
		"registry.example.org":  "", // its own block
		"ghcr.oi":               "ghcr.io",
		"quay.io":               "",
		"other.example.org":     "",
		"registry2.example.org": "registry.example.org",
	} {
		got := ""
		if r := c.NearRegistry(host); r != nil {
			got = r.Host
		}
		if got != want {
			t.Errorf("NearRegistry(%q) = %q, want %q", host, got, want)
		}
	}
}
