package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/verify"
	"github.com/pin-tool/pin/lock"
)

// fakeVerifier is resolve's own seam (Verifier), for its unit tests: the
// signatures of images, by scenario word. A word it does not know is
// unsigned. The sigstore implementation's round trips through Resolve are
// internal/verify/sigstore's tests.
type fakeVerifier struct {
	// verdicts by digest: a Reason, or "key:<signer>" for a signature that
	// verifies, recorded under the signature digest "sig-<word>".
	verdicts map[string]string
	// recorded: what Recheck answers by signature digest; an absent one is
	// gone from the registry.
	recorded map[string]string
	mu       sync.Mutex
	calls    []string
}

func newFakeVerifier(signed map[string]string) *fakeVerifier {
	f := &fakeVerifier{verdicts: map[string]string{}, recorded: map[string]string{}}
	for w, v := range signed {
		d := word(repo, w).Digest
		f.verdicts[d] = v
		if strings.HasPrefix(v, "key:") {
			f.recorded[sigOf(w)] = d
		}
	}
	return f
}

// sigOf is the signature manifest's digest the fake gives word w.
func sigOf(w string) string { return "sha256:sig-" + w }

func (f *fakeVerifier) note(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeVerifier) Verify(_ context.Context, _, digest string) (verify.Result, error) {
	f.note("verify " + digest)
	v := f.verdicts[digest]
	signer, ok := strings.CutPrefix(v, "key:")
	switch {
	case ok:
		for s, d := range f.recorded {
			if d == digest {
				return verify.Result{Method: verify.MethodCosignKey, Signer: signer, Signature: s}, nil
			}
		}
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "its signature was deleted"}
	case v == "":
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "no signature"}
	case v == "registry down":
		return verify.Result{}, errors.New("dial tcp: connection refused")
	}
	return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Reason(v)}
}

func (f *fakeVerifier) Recheck(ctx context.Context, repo, digest, signature string) (verify.Result, error) {
	f.note("recheck " + digest)
	if f.recorded[signature] != digest {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Unsigned, Detail: "the recorded signature is gone from the registry"}
	}
	signer, ok := strings.CutPrefix(f.verdicts[digest], "key:")
	if !ok {
		return verify.Result{}, &verify.Failure{Digest: digest, Reason: verify.Reason(f.verdicts[digest])}
	}
	return verify.Result{Method: verify.MethodCosignKey, Signer: signer, Signature: signature}, nil
}

// verifyInput is a scenario (see scenarioInput) whose module has a verify
// policy, checked by fake.
func verifyInput(t *testing.T, policy, pin, running, upstream, options string, fake *fakeVerifier) Input {
	t.Helper()
	in := scenarioInput(t, policy, pin, running, upstream, options)
	in.Catalogue.Modules[0].Verify = &catalogue.Verify{Keys: []string{"cosign.pub"}}
	in.Verifier = func(*catalogue.Module) (Verifier, error) { return fake, nil }
	return in
}

// verifiedEntry is a previous lock entry of word w, verified as fake
// records it.
func verifiedEntry(policy, w, signer string) *lock.Module {
	img := word(repo, w)
	return &lock.Module{Name: "svc", Policy: policy, Image: repo, Tag: img.Tag, Digest: img.Digest, Source: lock.SourceUpstream, Reason: "r",
		Verified: verify.MethodCosignKey, Signer: signer, Signature: sigOf(w)}
}

// TestVerifyDecisions: how a verify policy bears on each policy's choice,
// on resolve's own seam. Signatures by word: "key:<signer>" verifies;
// another value is the failure's reason; none is unsigned.
func TestVerifyDecisions(t *testing.T) {
	for _, tt := range []struct {
		name                      string
		policy, pin, run, up, opt string
		signed                    map[string]string
		old                       *lock.Module
		want                      string // the locked tag and how, or "refuse:<kind>", or "error"
		skipped, floors, contains string
	}{
		{name: "newest signed tag wins, newer failures skipped", policy: "track-upstream", pin: "-", run: "-", up: "1.0.0,1.1.0,1.2.0,1.3.0",
			signed: map[string]string{"1.0.0": "key:K", "1.1.0": "key:K", "1.3.0": string(verify.UntrustedSigner)},
			want:   "1.1.0 cosign-key K sha256:sig-1.1.0", skipped: "1.3.0: untrusted signer, 1.2.0: unsigned"},
		{name: "an unsigned exact pin is refused", policy: "exact", pin: "1.2.0", run: "-", up: "-",
			want: "refuse:unverified", contains: "the exact pin 1.2.0 (sha256:"},
		{name: "a pin signed for another digest is refused", policy: "at-least-running", pin: "1.2.0", run: "-", up: "-",
			signed: map[string]string{"1.2.0": string(verify.OtherDigest)},
			want:   "refuse:unverified", contains: "signature for another digest"},
		{name: "a floating tag that fails is refused", policy: "track-upstream", pin: "-", run: "-", up: "latest", opt: "tag=latest",
			want: "refuse:unverified", contains: "the floating tag latest"},
		{name: "what runs is a floor signed or not, and reported", policy: "track-upstream", pin: "-", run: "1.4.0", up: "1.1.0,1.2.0",
			signed: map[string]string{"1.2.0": "key:K"},
			want:   "1.4.0 unverified", floors: "1.4.0: unsigned"},
		{name: "an older unsigned floor is reported", policy: "track-upstream", pin: "-", run: "1.1.0", up: "1.1.0,1.2.0",
			signed: map[string]string{"1.2.0": "key:K"},
			want:   "1.2.0 cosign-key K sha256:sig-1.2.0", floors: "1.1.0: unsigned"},
		{name: "none verified and nothing to fall back on", policy: "track-upstream", pin: "-", run: "-", up: "1.1.0,1.2.0",
			want: "refuse:unverified", contains: "none of the newest 2 upstream tags verifies", skipped: "1.2.0: unsigned, 1.1.0: unsigned"},
		{name: "a registry error is no verdict", policy: "exact", pin: "1.2.0", run: "-", up: "-",
			signed: map[string]string{"1.2.0": "registry down"}, want: "error", contains: "connection refused"},
		{name: "the recorded signature answers first", policy: "track-upstream", pin: "-", run: "-", up: "1.1.0,1.2.0",
			signed: map[string]string{"1.2.0": "key:K"}, old: verifiedEntry("track-upstream", "1.2.0", "K"),
			want: "1.2.0 cosign-key K sha256:sig-1.2.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeVerifier(tt.signed)
			if tt.opt == "" {
				tt.opt = "-"
			}
			in := verifyInput(t, tt.policy, tt.pin, tt.run, tt.up, tt.opt, fake)
			if tt.old != nil {
				in.Old = &lock.Lock{Modules: []*lock.Module{tt.old}}
			}
			d := Resolve(context.Background(), in).Decisions[0]
			got := ""
			switch {
			case d.Err != nil:
				got = "error"
			case d.Refusal != nil:
				got = "refuse:" + string(d.Refusal.Kind)
			case d.New.Verified == "":
				got = d.New.Tag + " unverified"
			default:
				got = fmt.Sprintf("%s %s %s %s", d.New.Tag, d.New.Verified, d.New.Signer, d.New.Signature)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q (refusal %v, error %v)", got, tt.want, d.Refusal, d.Err)
			}
			if tt.contains != "" {
				msg := fmt.Sprint(d.Refusal, d.Err)
				if !strings.Contains(msg, tt.contains) {
					t.Errorf("message %q lacks %q", msg, tt.contains)
				}
			}
			var skipped, floors []string
			for _, u := range d.Verification.Skipped {
				skipped = append(skipped, u.Image.Tag+": "+string(u.Failure.Reason))
			}
			for _, u := range d.Verification.Floors {
				floors = append(floors, u.Image.Tag+": "+string(u.Failure.Reason))
			}
			if s := strings.Join(skipped, ", "); s != tt.skipped {
				t.Errorf("skipped %q, want %q", s, tt.skipped)
			}
			if s := strings.Join(floors, ", "); s != tt.floors {
				t.Errorf("unverified floors %q, want %q", s, tt.floors)
			}
			if tt.old != nil && slices.Contains(fake.calls, "verify "+tt.old.Digest) {
				t.Errorf("calls %v: the recorded signature verified, yet signatures were looked up afresh", fake.calls)
			}
		})
	}
}

// TestVerifyWithoutPolicyOrVerifier: a module without a verify block asks
// nothing of signatures; one with a block and no verifier (offline with no
// cache) cannot verify and says so; a policy that cannot be loaded is the
// module's error, naming its verify block.
func TestVerifyWithoutPolicyOrVerifier(t *testing.T) {
	fake := newFakeVerifier(nil)
	in := verifyInput(t, "track-upstream", "-", "-", "1.1.0", "-", fake)
	in.Catalogue.Modules[0].Verify = nil
	if d := Resolve(context.Background(), in).Decisions[0]; d.New == nil || d.New.Verified != "" || d.Verification != nil || len(fake.calls) > 0 {
		t.Errorf("no verify block: %+v, verification %v, calls %v", d.New, d.Verification, fake.calls)
	}

	in = verifyInput(t, "track-upstream", "-", "-", "1.1.0", "-", fake)
	in.Verifier = nil
	if d := Resolve(context.Background(), in).Decisions[0]; d.Err == nil || !strings.Contains(d.Err.Error(), "no registry may be asked for its signatures") {
		t.Errorf("no verifier: error %v", d.Err)
	}

	in = verifyInput(t, "track-upstream", "-", "-", "1.1.0", "-", fake)
	in.Verifier = func(*catalogue.Module) (Verifier, error) { return nil, errors.New("verify key: no such file") }
	if d := Resolve(context.Background(), in).Decisions[0]; d.Err == nil || !strings.Contains(d.Err.Error(), `module "svc"`) || !strings.Contains(d.Err.Error(), "no such file") {
		t.Errorf("policy not loaded: error %v", d.Err)
	}
}
