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

// verifiedEntry is a previous lock entry of word w, verified by signer
// with the signature manifest sig (sigOf(w) when "").
func verifiedEntry(policy, w, signer, sig string) *lock.Module {
	img := word(repo, w)
	if sig == "" {
		sig = sigOf(w)
	}
	source := lock.SourceUpstream
	if policy != "track-upstream" {
		source = lock.SourcePin
	}
	return &lock.Module{Name: "svc", Policy: lock.Policy(policy), Image: repo, Tag: img.Tag, Digest: img.Digest, Source: source, Reason: "r",
		Verified: lock.MethodCosignKey, Signer: signer, Signature: sig}
}

// keptEntry is a previous lock entry of word w kept unverified by the
// words why.
func keptEntry(policy, w, why string) *lock.Module {
	e := verifiedEntry(policy, w, "", "")
	e.Verified, e.Signer, e.Signature, e.AllowUnverified = "", "", "", why
	return e
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
		allow                     string // the catalogue's allow_unverified
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
			signed: map[string]string{"1.2.0": "key:K"}, old: verifiedEntry("track-upstream", "1.2.0", "K", ""),
			want: "1.2.0 cosign-key K sha256:sig-1.2.0"},

		// Losing verification is said out loud.
		{name: "a deleted signature is refused", policy: "track-upstream", pin: "-", run: "-", up: "1.1.0,1.2.0",
			signed: map[string]string{"1.1.0": "key:K"}, old: verifiedEntry("track-upstream", "1.2.0", "K", ""),
			want: "refuse:unverified", skipped: "1.2.0: unsigned", floors: "1.2.0: unsigned",
			contains: "the locked image 1.2.0 (sha256:"},
		{name: "allow_unverified keeps it, in the lock", policy: "track-upstream", pin: "-", run: "-", up: "1.1.0,1.2.0",
			signed: map[string]string{"1.1.0": "key:K"}, old: verifiedEntry("track-upstream", "1.2.0", "K", ""), allow: "vendor deleted it, SUP-1",
			want: "1.2.0 unverified allow_unverified=vendor deleted it, SUP-1", skipped: "1.2.0: unsigned", floors: "1.2.0: unsigned"},
		{name: "a key rotated out is refused", policy: "track-upstream", pin: "-", run: "-", up: "1.2.0",
			signed: map[string]string{"1.2.0": string(verify.UntrustedSigner)}, old: verifiedEntry("track-upstream", "1.2.0", "K", ""),
			want: "refuse:unverified", skipped: "1.2.0: untrusted signer", floors: "1.2.0: untrusted signer", contains: "now:      untrusted signer"},
		{name: "an exact pin that lost its signature", policy: "exact", pin: "1.2.0", run: "-", up: "-",
			old:  verifiedEntry("exact", "1.2.0", "K", ""),
			want: "refuse:unverified", contains: "can no longer be verified"},
		{name: "an exact pin kept by allow_unverified", policy: "exact", pin: "1.2.0", run: "-", up: "-",
			old: verifiedEntry("exact", "1.2.0", "K", ""), allow: "why",
			want: "1.2.0 unverified allow_unverified=why", floors: "1.2.0: unsigned"},
		{name: "a floating tag that lost its signature", policy: "track-upstream", pin: "-", run: "-", up: "latest", opt: "tag=latest",
			old:  verifiedEntry("track-upstream", "latest", "K", ""),
			want: "refuse:unverified", contains: "can no longer be verified"},
		{name: "kept while the catalogue states the words", policy: "track-upstream", pin: "-", run: "-", up: "1.2.0",
			old: keptEntry("track-upstream", "1.2.0", "why"), allow: "why",
			want: "1.2.0 unverified allow_unverified=why", skipped: "1.2.0: unsigned", floors: "1.2.0: unsigned"},
		{name: "refused once the catalogue drops the words", policy: "track-upstream", pin: "-", run: "-", up: "1.2.0",
			old:  keptEntry("track-upstream", "1.2.0", "why"),
			want: "refuse:unverified", skipped: "1.2.0: unsigned", floors: "1.2.0: unsigned", contains: "kept unverified by allow_unverified = \"why\""},
		{name: "nothing lost when a newer signed image wins", policy: "track-upstream", pin: "-", run: "-", up: "1.2.0,1.3.0",
			signed: map[string]string{"1.3.0": "key:K"}, old: verifiedEntry("track-upstream", "1.2.0", "K", ""),
			want: "1.3.0 cosign-key K sha256:sig-1.3.0"},
		{name: "re-signed: the new signature is recorded", policy: "track-upstream", pin: "-", run: "-", up: "1.2.0",
			signed: map[string]string{"1.2.0": "key:K2"}, old: verifiedEntry("track-upstream", "1.2.0", "K", "sha256:sig-deleted"),
			want: "1.2.0 cosign-key K2 sha256:sig-1.2.0"},
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
			in.Catalogue.Modules[0].AllowUnverified = tt.allow
			d := Resolve(context.Background(), in).Decisions[0]
			got := ""
			switch {
			case d.Err() != nil:
				got = "error"
			case d.Refusal() != nil:
				got = "refuse:" + string(d.Refusal().Kind)
			case d.New().Verified == "" && d.New().AllowUnverified != "":
				got = d.New().Tag + " unverified allow_unverified=" + d.New().AllowUnverified
			case d.New().Verified == "":
				got = d.New().Tag + " unverified"
			default:
				got = fmt.Sprintf("%s %s %s %s", d.New().Tag, d.New().Verified, d.New().Signer, d.New().Signature)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q (refusal %v, error %v)", got, tt.want, d.Refusal(), d.Err())
			}
			if tt.contains != "" {
				msg := fmt.Sprint(d.Refusal(), d.Err())
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
			if tt.old != nil && tt.old.Signature != "" && fake.recorded[tt.old.Signature] == tt.old.Digest && slices.Contains(fake.calls, "verify "+tt.old.Digest) {
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
	if d := Resolve(context.Background(), in).Decisions[0]; d.New() == nil || d.New().Verified != "" || d.Verification != nil || len(fake.calls) > 0 {
		t.Errorf("no verify block: %+v, verification %v, calls %v", d.New(), d.Verification, fake.calls)
	}

	in = verifyInput(t, "track-upstream", "-", "-", "1.1.0", "-", fake)
	in.Verifier = nil
	if d := Resolve(context.Background(), in).Decisions[0]; d.Err() == nil || !strings.Contains(d.Err().Error(), "no registry may be asked for its signatures") {
		t.Errorf("no verifier: error %v", d.Err())
	}

	in = verifyInput(t, "track-upstream", "-", "-", "1.1.0", "-", fake)
	in.Verifier = func(*catalogue.Module) (Verifier, error) { return nil, errors.New("verify key: no such file") }
	if d := Resolve(context.Background(), in).Decisions[0]; d.Err() == nil || !strings.Contains(d.Err().Error(), `module "svc"`) || !strings.Contains(d.Err().Error(), "no such file") {
		t.Errorf("policy not loaded: error %v", d.Err())
	}
}

// TestLostVerificationAtTheGates: pin plan and the enforcement points
// (Judge) treat the locked image that lost its verification as pin
// resolve does: plan's verdict is unverified (never safe), and Judge
// refuses to deploy it, naming what was lost and what to write; the
// lock's allow_unverified, recorded by pin resolve from the catalogue's
// words, accepts it; another image is judged by order as before.
func TestLostVerificationAtTheGates(t *testing.T) {
	for _, tt := range []struct {
		name         string
		old          *lock.Module
		allow        string
		signed       map[string]string
		plan, judged string
	}{
		{name: "verified and still", old: verifiedEntry("at-least-running", "1.2.0", "K", ""), signed: map[string]string{"1.2.0": "key:K"},
			plan: "upgrade", judged: "upgrade allowed"},
		{name: "its signature deleted", old: verifiedEntry("at-least-running", "1.2.0", "K", ""),
			plan: "unverified", judged: "unverified refused"},
		{name: "words in the catalogue, not yet in the lock", old: verifiedEntry("at-least-running", "1.2.0", "K", ""), allow: "why",
			plan: "unverified", judged: "unverified refused"},
		{name: "words in the lock and the catalogue", old: keptEntry("at-least-running", "1.2.0", "why"), allow: "why",
			plan: "upgrade", judged: "upgrade allowed"},
		{name: "words in the lock only", old: keptEntry("at-least-running", "1.2.0", "why"),
			plan: "unverified", judged: "unverified refused"},
		{name: "an unverified floor the lock records", old: keptEntry("at-least-running", "1.2.0", ""),
			plan: "upgrade", judged: "upgrade allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeVerifier(tt.signed)
			in := verifyInput(t, "at-least-running", "1.2.0", "1.1.0", "-", "-", fake)
			m := in.Catalogue.Modules[0]
			m.AllowUnverified = tt.allow
			in.Old = &lock.Lock{Modules: []*lock.Module{tt.old}}
			in.Record.Host = "host-0"
			cuts, err := PlanCutover(context.Background(), in)
			if err != nil || len(cuts) != 1 {
				t.Fatalf("plan: %v %v", cuts, err)
			}
			if got := string(cuts[0].Verdict); got != tt.plan {
				t.Errorf("plan: %s (%s), want %s", got, cuts[0].Order.Detail, tt.plan)
			}
			if tt.plan == "unverified" && (cuts[0].Safe() || !strings.Contains(cuts[0].Order.Detail, "can no longer be verified")) {
				t.Errorf("plan: safe %v, detail %q", cuts[0].Safe(), cuts[0].Order.Detail)
			}
			j, err := Judge(context.Background(), in, m, word(repo, "1.2.0"), Override{})
			if err != nil {
				t.Fatal(err)
			}
			got := string(j.Verdict) + " allowed"
			if !j.Allowed() {
				got = string(j.Verdict) + " refused"
			}
			if got != tt.judged {
				t.Errorf("judge: %s (%v), want %s", got, j.Refusal, tt.judged)
			}
			if !j.Allowed() {
				for _, want := range []string{`module "svc"`, word(repo, "1.2.0").Digest, "allow_unverified", `"pin resolve"`} {
					if !strings.Contains(j.Refusal.Error(), want) {
						t.Errorf("judge's refusal lacks %q:\n%s", want, j.Refusal)
					}
				}
			}
			// Another image is judged by order alone.
			if j, err := Judge(context.Background(), in, m, word(repo, "1.3.0"), Override{}); err != nil || j.Verdict == VerdictUnverified {
				t.Errorf("judge 1.3.0: %+v %v", j, err)
			}
		})
	}
}

// TestVerifyEntry: pin verify's check of one entry: the recorded signature
// by digest, as the lock names its signer; an entry kept by
// allow_unverified while the catalogue states the words; with fresh, any
// signature the policy accepts now.
func TestVerifyEntry(t *testing.T) {
	for _, tt := range []struct {
		name   string
		e      *lock.Module
		allow  string
		signed map[string]string
		fresh  bool
		want   string
	}{
		{name: "as recorded", e: verifiedEntry("exact", "1.2.0", "K", ""), signed: map[string]string{"1.2.0": "key:K"}, want: "ok sha256:sig-1.2.0"},
		{name: "another signer", e: verifiedEntry("exact", "1.2.0", "K", ""), signed: map[string]string{"1.2.0": "key:K2"}, want: "fail untrusted signer"},
		{name: "deleted", e: verifiedEntry("exact", "1.2.0", "K", ""), want: "fail unsigned"},
		{name: "re-signed, as recorded", e: verifiedEntry("exact", "1.2.0", "K", "sha256:sig-old"), signed: map[string]string{"1.2.0": "key:K"}, want: "fail unsigned"},
		{name: "re-signed, fresh", e: verifiedEntry("exact", "1.2.0", "K", "sha256:sig-old"), signed: map[string]string{"1.2.0": "key:K"}, fresh: true, want: "ok sha256:sig-1.2.0"},
		{name: "kept in words", e: keptEntry("exact", "1.2.0", "why"), allow: "why", want: "kept why"},
		{name: "kept, the words dropped", e: keptEntry("exact", "1.2.0", "why"), want: "fail unsigned"},
		{name: "an unverified floor", e: keptEntry("exact", "1.2.0", ""), want: "fail unsigned"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFakeVerifier(tt.signed)
			in := verifyInput(t, "exact", "1.2.0", "-", "-", "-", fake)
			m := in.Catalogue.Modules[0]
			m.AllowUnverified = tt.allow
			c, err := VerifyEntry(context.Background(), in, m, tt.e, tt.fresh)
			var f *verify.Failure
			got := ""
			switch {
			case errors.As(err, &f):
				got = "fail " + string(f.Reason)
			case err != nil:
				t.Fatal(err)
			case c.Kept != "":
				got = "kept " + c.Kept
			default:
				got = "ok " + c.Result.Signature
			}
			if got != tt.want {
				t.Errorf("%s, want %s (%v)", got, tt.want, err)
			}
		})
	}
}
