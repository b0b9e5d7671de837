package sigstore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

const (
	issuer = "https://issuer.example"
	signer = "release@example.com"
)

// referrerRegistries are the registries the referrer tests run on:
// go-containerregistry's in-memory one with the referrers API, and the
// real test registry (distribution 2.8: no API, the fallback tag).
func referrerRegistries(t *testing.T) map[string]string {
	h := ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0)), ggcrregistry.WithReferrersSupport(true))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	out := map[string]string{"api": strings.TrimPrefix(srv.URL, "http://")}
	if !testing.Short() {
		out["real"] = testenv.Registry(t)
	}
	return out
}

func repoFor(t *testing.T, host string) string {
	return host + "/verify/" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
}

func failure(t *testing.T, what string, err error, want verify.Reason) {
	t.Helper()
	var f *verify.Failure
	if !errors.As(err, &f) || f.Reason != want {
		t.Errorf("%s: %v, want a failure %q", what, err, want)
	}
}

// TestKeylessTagScheme: keyless signatures under cosign's tag scheme,
// verified against a generated trusted root: the right identity passes
// and is recorded; another subject, another issuer, a certificate of
// another authority, a tampered signature and a signature for another
// digest are refused with their reasons.
func TestKeylessTagScheme(t *testing.T) {
	for name, host := range registries(t) {
		t.Run(name, func(t *testing.T) { testKeylessTagScheme(t, host) })
	}
}

func testKeylessTagScheme(t *testing.T, host string) {
	ctx := context.Background()
	repo := repoFor(t, host)
	ss, other := verifytest.NewSigstore(t), verifytest.NewSigstore(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: t.Name() + tag})).DigestStr()
	}
	good := push("good")
	sigGood := ss.SignKeyless(t, signer, issuer, repo, good)
	wrongSubject := push("wrong-subject")
	ss.SignKeyless(t, "intruder@example.com", issuer, repo, wrongSubject)
	wrongIssuer := push("wrong-issuer")
	ss.SignKeyless(t, signer, "https://other-issuer.example", repo, wrongIssuer)
	otherCA := push("other-ca")
	other.SignKeyless(t, signer, issuer, repo, otherCA)
	tampered := push("tampered")
	p := verifytest.Payload(repo, tampered)
	sig, ann := ss.KeylessAnnotations(t, signer, issuer, p)
	sig[len(sig)-1] ^= 1
	ann[sigstore.SignatureAnnotation] = base64.StdEncoding.EncodeToString(sig)
	verifytest.PushAnnotated(t, repo, tampered, p, ann)
	copied := push("copied")
	_, ann = ss.KeylessAnnotations(t, signer, issuer, verifytest.Payload(repo, good))
	verifytest.PushAnnotated(t, repo, copied, verifytest.Payload(repo, good), ann)
	untimed := push("untimed") // neither a log entry nor a timestamp
	p = verifytest.Payload(repo, untimed)
	_, ann = ss.KeylessAnnotations(t, signer, issuer, p)
	delete(ann, sigstore.RekorBundleAnnotation)
	delete(ann, sigstore.TimestampAnnotation)
	verifytest.PushAnnotated(t, repo, untimed, p, ann)
	tsaOnly := push("tsa-only") // no log entry, an RFC 3161 timestamp
	p = verifytest.Payload(repo, tsaOnly)
	_, ann = ss.KeylessAnnotations(t, signer, issuer, p)
	delete(ann, sigstore.RekorBundleAnnotation)
	verifytest.PushAnnotated(t, repo, tsaOnly, p, ann)
	keySigned := push("key-signed")
	verifytest.SignImage(t, verifytest.NewKey(t), repo, keySigned)

	counter := registry.NewCounter(http.DefaultTransport)
	cache := registry.NewCache(t.TempDir())
	src := registry.NewRemote(registry.RemoteOptions{Host: host, Transport: counter, Cache: cache})
	pol, err := sigstore.New(verify.Spec{Issuer: issuer, Subject: signer, TrustedRoot: ss.RootPath})
	if err != nil {
		t.Fatal(err)
	}
	r, err := pol.Verify(ctx, both(src), repo, good)
	if err != nil {
		t.Fatalf("keyless signed image: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKeyless, Signer: issuer + " " + signer, Signature: sigGood}); r != want {
		t.Errorf("keyless signed image: %+v, want %+v", r, want)
	}
	for _, tt := range []struct {
		name   string
		digest string
		want   verify.Reason
	}{
		{"another subject", wrongSubject, verify.UntrustedSigner},
		{"another issuer", wrongIssuer, verify.UntrustedSigner},
		{"a certificate of another authority", otherCA, verify.UntrustedSigner},
		{"a tampered signature", tampered, verify.BadSignature},
		{"a signature for another digest", copied, verify.OtherDigest},
		{"a key signature", keySigned, verify.UntrustedSigner},
		{"no verifiable time", untimed, verify.BadSignature},
	} {
		_, err := pol.Verify(ctx, both(src), repo, tt.digest)
		failure(t, tt.name, err, tt.want)
	}
	if _, err := pol.Verify(ctx, both(src), repo, tsaOnly); err != nil {
		t.Errorf("a timestamp and no log entry: %v", err)
	}

	// subject_regex admits the subject it matches, and only it.
	re, err := sigstore.New(verify.Spec{Issuer: issuer, SubjectRegex: regexp.MustCompile(`^release@example\.com$`), TrustedRoot: ss.RootPath})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := re.Verify(ctx, both(src), repo, good); err != nil {
		t.Errorf("subject_regex: %v", err)
	}
	_, err = re.Verify(ctx, both(src), repo, wrongSubject)
	failure(t, "subject_regex, another subject", err, verify.UntrustedSigner)

	// Warm: the recorded signature costs nothing, offline too.
	before := total(counter)
	if _, err := pol.Recheck(ctx, both(src), repo, good, sigGood); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 0 {
		t.Errorf("warm Recheck sent %d requests, want 0: %v", got, counter.Summary())
	}
	if _, err := pol.Recheck(ctx, both(registry.Offline{Cache: cache}), repo, good, sigGood); err != nil {
		t.Errorf("offline Recheck: %v", err)
	}
}

// TestKeylessBundleReferrer: Sigstore bundles attached as OCI 1.1
// referrers (found through the referrers API on the in-memory registry,
// through the fallback tag on the real one) verify, keyless and with a
// key; an attestation is not a signature; a bundle about another digest,
// another identity and a tampered envelope are refused.
func TestKeylessBundleReferrer(t *testing.T) {
	for name, host := range referrerRegistries(t) {
		t.Run(name, func(t *testing.T) { testKeylessBundleReferrer(t, host, name == "api") })
	}
}

func testKeylessBundleReferrer(t *testing.T, host string, api bool) {
	ctx := context.Background()
	repo := repoFor(t, host)
	ss := verifytest.NewSigstore(t)
	key := verifytest.NewKey(t)
	push := func(tag string) string {
		return testimage.Push(t, repo+":"+tag, testimage.Build(t, testimage.Options{Content: t.Name() + tag})).DigestStr()
	}
	good := push("good")
	refGood := verifytest.PushBundle(t, repo, good, ss.KeylessBundle(t, signer, issuer, verifytest.Statement(repo, good)))
	keyed := push("keyed")
	refKeyed := verifytest.PushBundle(t, repo, keyed, verifytest.KeyBundle(t, key, verifytest.Statement(repo, keyed)))
	attested := push("attested")
	st := strings.Replace(string(verifytest.Statement(repo, attested)), sigstore.SignPredicate, "https://slsa.dev/provenance/v1", 1)
	verifytest.PushBundle(t, repo, attested, ss.KeylessBundle(t, signer, issuer, []byte(st)))
	copied := push("copied")
	verifytest.PushBundle(t, repo, copied, ss.KeylessBundle(t, signer, issuer, verifytest.Statement(repo, good)))
	intruder := push("intruder")
	verifytest.PushBundle(t, repo, intruder, ss.KeylessBundle(t, "intruder@example.com", issuer, verifytest.Statement(repo, intruder)))
	tampered := push("tampered")
	b := ss.KeylessBundle(t, signer, issuer, verifytest.Statement(repo, tampered))
	verifytest.PushBundle(t, repo, tampered, tamperBundle(t, b))

	counter := registry.NewCounter(http.DefaultTransport)
	cache := registry.NewCache(t.TempDir())
	src := registry.NewRemote(registry.RemoteOptions{Host: host, Transport: counter, Cache: cache})
	pol, err := sigstore.New(verify.Spec{Issuer: issuer, Subject: signer, TrustedRoot: ss.RootPath})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.Manifest(ctx, repo, "good"); err != nil { // the ping, out of the count
		t.Fatal(err)
	}
	before := total(counter)
	r, err := pol.Verify(ctx, both(src), repo, good)
	if err != nil {
		t.Fatalf("keyless bundle: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKeyless, Signer: issuer + " " + signer, Signature: refGood}); r != want {
		t.Errorf("keyless bundle: %+v, want %+v", r, want)
	}
	// Cold: the .sig tag (404), the referrers (API: one GET; fallback:
	// the API's 404 and the tag), the referrer's manifest and its bundle.
	want := 5
	if api {
		want = 4
	}
	if got := total(counter) - before; got != want {
		t.Errorf("cold Verify by referrer sent %d requests, want %d: %v", got, want, counter.Summary())
	}
	for _, tt := range []struct {
		name   string
		digest string
		want   verify.Reason
	}{
		{"an attestation only", attested, verify.Unsigned},
		{"a bundle for another digest", copied, verify.OtherDigest},
		{"another subject", intruder, verify.UntrustedSigner},
		{"a tampered envelope", tampered, verify.BadSignature},
		{"a key-signed bundle", keyed, verify.UntrustedSigner},
	} {
		_, err := pol.Verify(ctx, both(src), repo, tt.digest)
		failure(t, tt.name, err, tt.want)
	}
	keyPol, err := sigstore.New(verify.Spec{Keys: []string{key.Path}})
	if err != nil {
		t.Fatal(err)
	}
	r, err = keyPol.Verify(ctx, both(src), repo, keyed)
	if err != nil {
		t.Fatalf("key-signed bundle: %v", err)
	}
	if want := (verify.Result{Method: verify.MethodCosignKey, Signer: key.Fingerprint, Signature: refKeyed}); r != want {
		t.Errorf("key-signed bundle: %+v, want %+v", r, want)
	}
	_, err = keyPol.Verify(ctx, both(src), repo, good)
	failure(t, "a keyless bundle under a key policy", err, verify.UntrustedSigner)

	// Warm: the recorded referrer costs nothing, offline too; Verify
	// again asks the .sig tag and the referrers, not the bundle.
	before = total(counter)
	if _, err := pol.Recheck(ctx, both(src), repo, good, refGood); err != nil {
		t.Fatal(err)
	}
	if got := total(counter) - before; got != 0 {
		t.Errorf("warm Recheck sent %d requests, want 0: %v", got, counter.Summary())
	}
	if _, err := pol.Recheck(ctx, both(registry.Offline{Cache: cache}), repo, good, refGood); err != nil {
		t.Errorf("offline Recheck: %v", err)
	}
	before = total(counter)
	if _, err := pol.Verify(ctx, both(src), repo, good); err != nil {
		t.Fatal(err)
	}
	want = 3
	if api {
		want = 2
	}
	if got := total(counter) - before; got != want {
		t.Errorf("warm Verify by referrer sent %d requests, want %d: %v", got, want, counter.Summary())
	}
}

// tamperBundle flips a bit of the bundle's DSSE signature.
func tamperBundle(t *testing.T, b []byte) []byte {
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(b, &pb); err != nil {
		t.Fatal(err)
	}
	sig := pb.GetDsseEnvelope().Signatures[0].Sig
	sig[len(sig)-1] ^= 1
	out, err := protojson.Marshal(&pb)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNewKeyless: a keyless spec loads with its trusted root; keys with an
// identity, an incomplete identity, a missing or unreadable root, and a
// root without certificate authorities are refused.
func TestNewKeyless(t *testing.T) {
	ss := verifytest.NewSigstore(t)
	if _, err := sigstore.New(verify.Spec{Issuer: issuer, Subject: signer, TrustedRoot: ss.RootPath}); err != nil {
		t.Errorf("a keyless spec: %v", err)
	}
	noCA := filepath.Join(t.TempDir(), "root.json")
	if err := os.WriteFile(noCA, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.json")
	if err := os.WriteFile(garbage, []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	key := verifytest.NewKey(t)
	for name, spec := range map[string]verify.Spec{
		"keys and an identity": {Keys: []string{key.Path}, Issuer: issuer, Subject: signer, TrustedRoot: ss.RootPath},
		"no subject":           {Issuer: issuer, TrustedRoot: ss.RootPath},
		"no issuer":            {Subject: signer, TrustedRoot: ss.RootPath},
		"no trusted root":      {Issuer: issuer, Subject: signer},
		"a missing root":       {Issuer: issuer, Subject: signer, TrustedRoot: "/nonexistent/root.json"},
		"an unreadable root":   {Issuer: issuer, Subject: signer, TrustedRoot: garbage},
		"a root without a CA":  {Issuer: issuer, Subject: signer, TrustedRoot: noCA},
		"two subjects":         {Issuer: issuer, Subject: signer, SubjectRegex: regexp.MustCompile("x"), TrustedRoot: ss.RootPath},
	} {
		if _, err := sigstore.New(spec); err == nil {
			t.Errorf("%s: New = nil error", name)
		}
	}
}
