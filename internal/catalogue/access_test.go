package catalogue

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAccessSettings: a host's Docker context, and a registry's CA bundle
// and client certificate, paths made absolute against the catalogue's
// folder.
func TestAccessSettings(t *testing.T) {
	dir := t.TempDir()
	src := `
host "prod" {
  context = "prod"
}
host "tls" {
  docker     = "tcp://127.0.0.1:2376"
  cert_path  = "certs/engine"
  tls_verify = true
}
registry "registry.example.org:5000" {
  ca_file     = "certs/ca.crt"
  client_cert = "/etc/pin/client.cert"
  client_key  = "/etc/pin/client.key"
}
module "app" {
  image  = "registry.example.org:5000/app"
  policy = "exact"
  pin    = "1.0"
}
`
	if err := os.WriteFile(filepath.Join(dir, "pin.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, diags := Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if h := c.Host("prod"); h.Context != "prod" || h.Docker != "" {
		t.Errorf("host prod = %+v, want context prod and no address", h)
	}
	if h := c.Host("tls"); h.CertPath != filepath.Join(dir, "certs/engine") || !h.TLSVerify {
		t.Errorf("host tls = %+v", h)
	}
	r := c.Registry("registry.example.org:5000")
	if r == nil || r.CAFile != filepath.Join(dir, "certs/ca.crt") || r.ClientCert != "/etc/pin/client.cert" || r.ClientKey != "/etc/pin/client.key" {
		t.Errorf("registry = %+v", r)
	}
}
