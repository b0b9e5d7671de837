package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// The tests here sign with the real cosign CLI (v2.6.5, scripts/cosign) on
// the real test registry (distribution 2.8: no referrers API, so cosign
// writes the referrers fallback tag "sha256-<hex>"), and pin verifies.

// cosignRepo is a fresh repository on the test registry, and a pusher of
// tagged test images into it returning their digests.
func cosignRepo(t *testing.T, reg, name string) (string, func(tag string) string) {
	repo := fmt.Sprintf("%s/cosign/%s-%d", reg, name, time.Now().UnixNano())
	return repo, func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: repo + tag})).DigestStr()
	}
}

// fingerprint is how the lock names the key of the public key file pub.
func fingerprint(t *testing.T, pub string) string {
	t.Helper()
	b, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := cryptoutils.UnmarshalPEMToPublicKey(b)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := sigstore.Fingerprint(k)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// registryDigest is the digest the registry serves ref (a tag) by.
func registryDigest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatalf("HEAD %s: %v", ref, err)
	}
	return d.Digest.String()
}

// fallbackReferrers lists what the referrers fallback tag of repo@digest
// names: artifactType → manifest digest.
func fallbackReferrers(t *testing.T, repo, digest string) map[string]string {
	t.Helper()
	r, err := name.ParseReference(repo+":"+strings.Replace(digest, ":", "-", 1), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r)
	if err != nil {
		t.Fatalf("the fallback tag of %s: %v", digest, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range m.Manifests {
		out[d.ArtifactType] = d.Digest.String()
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifiedModule is a catalogue module pinning tag@digest of repo, with a
// verify block of key pub and the extra lines given.
func verifiedModule(name, repo, policy, pin, pub, extra string) string {
	p := ""
	if pin != "" {
		p = fmt.Sprintf("  pin    = %q\n", pin)
	}
	return fmt.Sprintf("module %q {\n  image  = %q\n  policy = %q\n%s%s  verify {\n    keys = [%q]\n  }\n}\n", name, repo, policy, p, extra, pub)
}

// TestCosignForms: every form cosign writes for a key is read: the tag
// scheme, the classic signature as an OCI 1.1 referrer, and a Sigstore
// bundle as a referrer, both through the fallback tag of a registry
// without the referrers API. The lock's signer is cosign.pub's
// fingerprint and its signature the manifest cosign wrote (as the
// registry serves it); cosign verify agrees. A referrer of a type pin
// does not read is named in the refusal.
func TestCosignForms(t *testing.T) {
	reg := testenv.Registry(t)
	cs := testenv.Cosign(t)
	repo, push := cosignRepo(t, reg, "forms")
	tagged, classic, bundled, notation := push("1.0.0"), push("1.1.0"), push("1.2.0"), push("1.3.0")
	cs.Sign(t, repo+"@"+tagged)
	cs.Sign(t, repo+"@"+classic, "--registry-referrers-mode=oci-1-1")
	cs.Sign(t, repo+"@"+bundled, "--new-bundle-format")
	verifytest.PushReferrer(t, repo, notation, "application/vnd.cncf.notary.signature",
		static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json"), static.NewLayer([]byte("jws"), "application/jose+json"), nil, nil)

	wantSig := map[string]string{
		"tagged":  registryDigest(t, repo+":"+strings.Replace(tagged, ":", "-", 1)+".sig"),
		"classic": fallbackReferrers(t, repo, classic)[sigstore.SignatureArtifactType],
		"bundled": "",
	}
	for _, d := range fallbackReferrers(t, repo, bundled) {
		wantSig["bundled"] = d // cosign's bundle is the one referrer of 1.2.0
	}
	// cosign agrees on the forms it verifies with a key alone.
	if out, ok := cs.Verify(t, repo+"@"+tagged); !ok {
		t.Errorf("cosign verify of the tag scheme:\n%s", out)
	}
	if out, ok := cs.Verify(t, repo+"@"+classic, "--experimental-oci11"); !ok {
		t.Errorf("cosign verify --experimental-oci11 of the classic referrer:\n%s", out)
	}

	dir := t.TempDir()
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	cat := verifiedModule("tagged", repo, "exact", "1.0.0@"+tagged, cs.Pub, "") +
		verifiedModule("classic", repo, "exact", "1.1.0@"+classic, cs.Pub, "") +
		verifiedModule("bundled", repo, "exact", "1.2.0@"+bundled, cs.Pub, "")
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	r := pin(t, dir, "resolve", cache, "--format", "json")
	if r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var plan struct {
		Modules []struct {
			Name string
			New  struct{ Digest, Verified, Signer, Signature string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	fp := fingerprint(t, cs.Pub)
	for _, m := range plan.Modules {
		if m.New.Verified != "cosign-key" || m.New.Signer != fp || m.New.Signature != wantSig[m.Name] || wantSig[m.Name] == "" {
			t.Errorf("%s: verified %q by %q with %q; want cosign-key by %s with %q", m.Name, m.New.Verified, m.New.Signer, m.New.Signature, fp, wantSig[m.Name])
		}
	}
	if len(plan.Modules) != 3 {
		t.Errorf("%d modules in the plan", len(plan.Modules))
	}
	r = pin(t, dir, "verify", cache)
	if r.code != 0 || strings.Count(r.stdout, "ok   ") != 3 {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A referrer of a type pin does not read is named, not called absent.
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat+verifiedModule("notation", repo, "exact", "1.3.0@"+notation, cs.Pub, ""))
	before := readFile(t, filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "resolve", cache)
	if r.code != 1 || !strings.Contains(r.stderr+r.stdout, "a referrer of type application/vnd.cncf.notary.signature is not read") {
		t.Errorf("a Notation referrer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := readFile(t, filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(before, after) {
		t.Errorf("a refused run changed the lock")
	}
}

// TestCosignLostSignature: a signature cosign wrote, deleted through the
// registry API after pin locked the image, is said out loud by every
// command that reads the registry, with the lock left byte-identical:
// pin resolve refuses (exit 1) naming the module, the digest, what was
// lost and what to write; pin plan's verdict is unverified; pin verify
// fails (the registry is asked, whatever the cache holds), while
// --offline, which trusts the cache, passes. allow_unverified keeps the
// image in words the lock records; signing again verifies it anew. A key
// rotated out of the catalogue is refused the same way.
func TestCosignLostSignature(t *testing.T) {
	reg := testenv.Registry(t)
	cs := testenv.Cosign(t)
	repo, push := cosignRepo(t, reg, "lost")
	d := push("1.0.0")
	cs.Sign(t, repo+"@"+d)
	sigTag := repo + ":" + strings.Replace(d, ":", "-", 1) + ".sig"
	sig := registryDigest(t, sigTag)

	dir := t.TempDir()
	cache := "--cache-dir=" + filepath.Join(dir, "cache")
	snap, err := json.Marshal(host.Snapshot{Schema: host.SnapshotSchema, Host: "mesh-1",
		Containers: []host.Container{{ID: "c1", Name: "web", Image: repo + ":1.0.0", ImageID: "sha256:" + strings.Repeat("1", 64), State: "running"}},
		Images:     []host.Image{{ID: "sha256:" + strings.Repeat("1", 64), RepoDigests: []string{repo + "@" + d}}}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mesh-1.json"), string(snap))
	write := func(pub, extra string) {
		writeFile(t, filepath.Join(dir, "catalogue.hcl"), "host \"mesh-1\" {\n  snapshot = \"mesh-1.json\"\n}\n"+
			verifiedModule("web", repo, "at-least-running", "1.0.0@"+d, pub, extra+"  runs_on \"mesh-1\" { container = \"web\" }\n"))
	}
	write(cs.Pub, "")
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	locked := readFile(t, filepath.Join(dir, "pin.lock.hcl"))
	if !strings.Contains(string(locked), `signature = "`+sig+`"`) {
		t.Fatalf("the lock does not record cosign's signature %s:\n%s", sig, locked)
	}

	// The signature manifest deleted through the registry API; the cache
	// still holds it.
	ref, err := name.NewDigest(repo+"@"+sig, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Delete(ref); err != nil {
		t.Fatalf("deleting the signature: %v", err)
	}
	r := pin(t, dir, "resolve", cache)
	out := r.stdout + r.stderr
	for _, want := range []string{`module "web"`, d, "can no longer be verified", "cosign-key by " + fingerprint(t, cs.Pub), "the recorded signature " + sig[:19] + " is gone from the registry",
		`allow_unverified = "<why>"`, "re-sign " + repo + ":1.0.0@" + d} {
		if !strings.Contains(out, want) {
			t.Errorf("resolve after the signature was deleted lacks %q: exit %d\n%s", want, r.code, out)
		}
	}
	if r.code != 1 {
		t.Errorf("resolve after the signature was deleted: exit %d, want 1", r.code)
	}
	if after := readFile(t, filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(after, locked) {
		t.Errorf("the refused run changed the lock:\n%s", after)
	}
	if r := pin(t, dir, "resolve", cache, "--check"); r.code != 1 {
		t.Errorf("resolve --check: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "plan", "mesh-1", cache); r.code != 1 || !strings.Contains(r.stdout, "UNVERIFIED") || !strings.Contains(r.stdout, "can no longer be verified") {
		t.Errorf("plan: exit %d, want 1 and UNVERIFIED\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "outdated", cache); r.code != 1 || !strings.Contains(r.stdout, "unverified") {
		t.Errorf("outdated: exit %d, want 1 and unverified\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "verify", cache); r.code != 1 || !strings.Contains(r.stdout, "FAIL web") || !strings.Contains(r.stdout, "gone from the registry") {
		t.Errorf("verify: exit %d, want 1 and the signature gone\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "verify", cache, "--offline"); r.code != 0 {
		t.Errorf("verify --offline (the cache alone): exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Kept in words: written to the lock, which no longer says verified.
	write(cs.Pub, "  allow_unverified = \"the publisher deleted its signatures by mistake; re-signing asked in SUP-7\"\n")
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve with allow_unverified: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	kept := string(readFile(t, filepath.Join(dir, "pin.lock.hcl")))
	if !strings.Contains(kept, `allow_unverified = "the publisher deleted its signatures by mistake; re-signing asked in SUP-7"`) || strings.Contains(kept, "verified  =") {
		t.Errorf("the lock does not keep the image in words:\n%s", kept)
	}
	if r := pin(t, dir, "verify", cache); r.code != 0 || !strings.Contains(r.stdout, "kept web") {
		t.Errorf("verify of the kept entry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := pin(t, dir, "plan", "mesh-1", cache); r.code != 0 {
		t.Errorf("plan of the kept entry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Signed again by cosign: verified anew, the words leave the lock.
	cs.Sign(t, repo+"@"+d)
	if r := pin(t, dir, "resolve", cache); r.code != 0 {
		t.Fatalf("resolve after signing again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	resigned := string(readFile(t, filepath.Join(dir, "pin.lock.hcl")))
	if !strings.Contains(resigned, `verified  = "cosign-key"`) || strings.Contains(resigned, "allow_unverified") {
		t.Errorf("the lock after signing again:\n%s", resigned)
	}

	// The key rotated out of the catalogue: refused, the lock unchanged.
	write(cs.OtherKey(t).Pub, "")
	before := readFile(t, filepath.Join(dir, "pin.lock.hcl"))
	r = pin(t, dir, "resolve", cache)
	if r.code != 1 || !strings.Contains(r.stderr+r.stdout, "untrusted signer") || !strings.Contains(r.stderr+r.stdout, "can no longer be verified") {
		t.Errorf("resolve with the key rotated out: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := readFile(t, filepath.Join(dir, "pin.lock.hcl")); !bytes.Equal(after, before) {
		t.Errorf("the refused run changed the lock")
	}
}

// TestCosignRepositoryBinding: one cosign key signs two repositories. An
// image of one, copied with its signature into the other, verifies there
// by default (cosign checks the digest alone, and so does pin), and is
// refused under match_repository, naming both repositories; an image
// cosign signed in its own repository passes either way.
func TestCosignRepositoryBinding(t *testing.T) {
	reg := testenv.Registry(t)
	cs := testenv.Cosign(t)
	admin, pushAdmin := cosignRepo(t, reg, "admin")
	web, pushWeb := cosignRepo(t, reg, "web")
	d := pushAdmin("1.0.0")
	cs.Sign(t, admin+"@"+d)
	// Copied into web, image and signature, as crane copy would.
	copyTo := func(from, to string) {
		src, err := name.ParseReference(from, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := name.ParseReference(to, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(dst, img); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(admin+"@"+d, web+":1.0.0")
	sigTag := ":" + strings.Replace(d, ":", "-", 1) + ".sig"
	copyTo(admin+sigTag, web+sigTag)
	own := pushWeb("1.1.0")
	cs.Sign(t, web+"@"+own)

	dir := t.TempDir()
	write := func(bind string) {
		writeFile(t, filepath.Join(dir, "catalogue.hcl"), strings.ReplaceAll(
			verifiedModule("copied", web, "exact", "1.0.0@"+d, cs.Pub, "")+verifiedModule("own", web, "exact", "1.1.0@"+own, cs.Pub, ""),
			"    keys = [", bind+"    keys = ["))
	}
	write("")
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Fatalf("without match_repository: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write("    match_repository = true\n")
	r := pin(t, dir, "resolve")
	if r.code != 1 || !strings.Contains(r.stderr+r.stdout, "signature for another repository") || !strings.Contains(r.stderr+r.stdout, "for "+admin+", not "+web) {
		t.Errorf("with match_repository: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, `module "own"`) {
		t.Errorf("with match_repository, own was refused:\n%s%s", r.stdout, r.stderr)
	}
	// own alone passes.
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), strings.ReplaceAll(verifiedModule("own", web, "exact", "1.1.0@"+own, cs.Pub, ""), "    keys = [", "    match_repository = true\n    keys = ["))
	if r := pin(t, dir, "resolve"); r.code != 0 {
		t.Errorf("own with match_repository: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
