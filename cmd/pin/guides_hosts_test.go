package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// The guides about hosts (Compose, Kubernetes, a Docker Engine's plugin,
// signatures, fleets) and installing pin, run word for word against the
// real component each is about: the guide's catalogue as written, its
// commands as written, its output as shown, with the substitutions each
// test names (the test's own registry and engine for the guide's
// placeholders, the digests it pushed for the ones shown).

// shLine is one command line of a guide's sh block: its words, without
// the comment, and the exit code the comment says ("(exit 1)"), else 0.
type shLine struct {
	text  string
	words []string
	code  int
}

var exitNote = regexp.MustCompile(`\(exit (\d)\)`)

// shBlock returns the command lines of the guide's first fenced block
// after marker.
func shBlock(t *testing.T, guide, marker string) []shLine {
	t.Helper()
	var out []shLine
	for _, l := range docBlock(t, guide, marker) {
		cmd, comment, _ := strings.Cut(l, "#")
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		sl := shLine{text: strings.TrimSpace(cmd), words: strings.Fields(cmd)}
		if m := exitNote.FindStringSubmatch(comment); m != nil {
			sl.code, _ = strconv.Atoi(m[1])
		}
		out = append(out, sl)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no command after %q", guide, marker)
	}
	return out
}

// normalizer rewrites what a test saw into the guide's terms: each pair
// is (what the test has, what the guide shows), applied in order.
type normalizer []string

func (n normalizer) apply(s string) string {
	return strings.NewReplacer(n...).Replace(s)
}

// digestAs maps the digest the test pushed to the one the guide shows:
// its first twelve hexadecimal digits (the short form pin prints, and the
// start of the full one, whose rest the guide leaves out with "…").
func digestAs(real, shown string) []string {
	return []string{strings.TrimPrefix(real, "sha256:")[:12], shown}
}

// needCompose is Debian's docker-compose (Compose 1.29), which the tests
// run for the guides' "docker compose".
func needCompose(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker-compose"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-compose required in CI (scripts/test installs Debian's docker-compose)")
		}
		t.Skip("docker-compose not installed")
	}
}

// TestGuideCompose runs docs/guides/compose.md word for word: its
// compose.yaml and catalogue.hcl as the folder (checked to be those of
// examples/compose), its commands in order on the test engine with
// docker-compose 1.29 for "docker compose", and its output as shown. The
// substitutions: REGISTRY names a folder of the test registry (the guide
// shows registry.example.org/stack, the file's default), the host's
// socket is the test engine's, Compose 1's container names (stack_web_1)
// read as Compose 2's (stack-web-1), and the builds pushed read as the
// digests the guide shows. What up -d starts is checked with the
// engine's inspect.
func TestGuideCompose(t *testing.T) {
	const guide = "docs/guides/compose.md"
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	needCompose(t)
	prefix := fmt.Sprintf("%s/guide-compose-%d", reg, time.Now().UnixNano())
	t.Setenv("REGISTRY", prefix) // for pin's own reading of the Compose file
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	// The folder is examples/compose, which holds the guide's compose.yaml
	// and catalogue.hcl (their lines, in order, between its comments).
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "examples", "compose"))); err != nil {
		t.Fatal(err)
	}
	reproduces(t, "examples/compose/compose.yaml", docBlock(t, guide, "is a stack as people write it"), string(mustRead(t, filepath.Join(dir, "compose.yaml"))))
	reproduces(t, "examples/compose/catalogue.hcl", docBlock(t, guide, "and its `catalogue.hcl` declares"), string(mustRead(t, filepath.Join(dir, "catalogue.hcl"))))
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		if !strings.Contains(s, `"unix:///var/run/docker.sock"`) {
			t.Fatalf("examples/compose/catalogue.hcl names no docker socket to replace with the test engine's:\n%s", s)
		}
		return strings.ReplaceAll(s, "unix:///var/run/docker.sock", dh)
	})

	sleeper := testimage.Sleeper(t)
	push := func(ref, date string) string {
		created, _ := time.Parse(time.DateOnly, date)
		img := testimage.Build(t, testimage.Options{Layer: sleeper, Entrypoint: []string{testimage.SleeperPath}, Created: created,
			Labels: map[string]string{"built": date}})
		return testimage.Push(t, ref, img).DigestStr()
	}
	webA := push(prefix+"/web:latest", "2026-09-01")
	workerA := push(prefix+"/worker:stable", "2026-09-02")

	compose := func(args ...string) string {
		return dockerCompose(t, dh, dir, nil, args...)
	}
	down := func() {
		cmd := exec.Command("docker-compose", "-p", "stack", "-f", "compose.yaml", "down", "-t", "0")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "DOCKER_HOST="+dh)
		cmd.Run()
	}
	down() // a stack left by an earlier run of the test on this engine
	t.Cleanup(down)

	var norm normalizer
	setNorm := func(webB string) {
		norm = normalizer{prefix, "registry.example.org/stack", "stack_web_1", "stack-web-1", "stack_worker_1", "stack-worker-1"}
		norm = append(norm, digestAs(webA, "d39e489d23ac")...)
		norm = append(norm, digestAs(workerA, "004bd17040d3")...)
		if webB != "" {
			norm = append(norm, digestAs(webB, "14fe214e5cda")...)
		}
	}
	setNorm("")
	// runs is the repo digests of the image each container of service
	// runs, from the engine's inspect.
	runs := func(service string) string {
		var out []string
		for _, id := range strings.Fields(compose("-p", "stack", "-f", "compose.yaml", "ps", "-q", service)) {
			img := dockerCLI(t, dh, "inspect", "-f", "{{.Image}}", id)
			out = append(out, dockerCLI(t, dh, "image", "inspect", "-f", "{{range .RepoDigests}}{{.}} {{end}}", img))
		}
		return strings.Join(out, "\n")
	}
	// run runs a command line of the guide and returns what it printed.
	run := func(l shLine) string {
		t.Helper()
		switch {
		case len(l.words) > 2 && l.words[0] == "docker" && l.words[1] == "compose":
			return compose(l.words[2:]...)
		case l.words[0] == "pin":
			r := pin(t, dir, l.words[1:]...)
			if r.code != l.code {
				t.Fatalf("%s: exit %d, the guide says %d\n%s%s", l.text, r.code, l.code, r.stdout, r.stderr)
			}
			return norm.apply(r.stdout + r.stderr)
		}
		t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		return ""
	}

	for _, l := range shBlock(t, guide, "In that folder:") {
		before := string(mustRead(t, filepath.Join(dir, "catalogue.hcl")))
		got := run(l)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s", l.text, got)
		}
		switch l.text {
		case "pin init --from-host dock":
			reproduces(t, l.text, docBlock(t, guide, "`init --from-host` recognises"), norm.apply(string(mustRead(t, filepath.Join(dir, "catalogue.hcl")))))
		case "pin init --compose compose.yaml --project-name stack --host dock --profile build":
			reproduces(t, l.text, docBlock(t, guide, "`init --compose` then adds nothing"), got)
			if after := string(mustRead(t, filepath.Join(dir, "catalogue.hcl"))); after != before {
				t.Errorf("%s changed the catalogue:\n%s", l.text, after)
			}
		case "pin export":
			reproduces(t, l.text, docBlock(t, guide, "`export` writes `compose.pin.yaml`"), norm.apply(string(mustRead(t, filepath.Join(dir, "compose.pin.yaml")))))
		case "docker compose -p stack -f compose.yaml -f compose.pin.yaml up -d":
			if got := runs("web"); !strings.Contains(got, webA) {
				t.Errorf("web runs %s, want the locked %s", got, webA)
			}
			if got := runs("worker"); !strings.Contains(got, workerA) {
				t.Errorf("worker runs %s, want the locked %s", got, workerA)
			}
		case "pin plan dock":
			reproduces(t, l.text, docBlock(t, guide, "`pin plan dock` then finds"), got)
		}
	}

	// web:latest moves upstream; the stack is pulled and brought up on its
	// floating tags.
	webB := push(prefix+"/web:latest", "2026-10-01")
	setNorm(webB)
	override := string(mustRead(t, filepath.Join(dir, "compose.pin.yaml")))
	for _, l := range shBlock(t, guide, "has moved upstream to a newer build") {
		got := run(l)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s", l.text, got)
		}
		switch l.text {
		case "docker compose -p stack up -d":
			if got := runs("web"); !strings.Contains(got, webB) {
				t.Fatalf("web runs %s after the pull, want the newer %s", got, webB)
			}
		case "pin outdated":
			reproduces(t, l.text, docBlock(t, guide, "`pin outdated` reports web"), trimLines(got))
		case "pin export --check":
			reproduces(t, l.text, docBlock(t, guide, "and `pin export --check` refuses"), got)
			if after := string(mustRead(t, filepath.Join(dir, "compose.pin.yaml"))); after != override {
				t.Errorf("%s wrote compose.pin.yaml", l.text)
			}
		}
	}
}

// needTool is a command-line tool a guide runs: skipped without it, failed
// under CI (scripts/test installs it).
func needTool(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s required in CI (scripts/test installs it)", tool)
		}
		t.Skipf("%s not installed", tool)
	}
}

// shell runs a guide's command line with sh in dir, as a reader would
// type it, and returns its output; it fails the test on a nonzero exit.
func shell(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// TestGuideKubernetes runs docs/guides/kubernetes.md word for word on the
// test kube-apiserver: its catalogue, its workstation commands and their
// output, then the CronJob's commands with kubectl (sed, the ConfigMap,
// rbac.yaml and cronjob.yaml applied), and the job's command as its pod
// would run it: the args of the CronJob read back from the API server,
// the ConfigMap's files, in-cluster (no kubeconfig, the ServiceAccount's
// token at /var/run/secrets/kubernetes.io/serviceaccount in a mount
// namespace of its own). There is no kubelet: the test makes forgejo's
// pods and reports them running, as TestKubernetesEndToEnd does. The
// substitutions: the kubeconfig's context is named prod, the namespace
// "apps" is one of the test's (also in the command lines' "-n apps"),
// registry.example.org/forge/forgejo a repository of the test registry,
// the build pushed is read as the digest shown, and /etc/pin and /cache
// of the job's args are folders of the test's.
func TestGuideKubernetes(t *testing.T) {
	const guide = "docs/guides/kubernetes.md"
	reg := testenv.Registry(t)
	kc := testenv.Kubernetes(t)
	needTool(t, "kubectl")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("the guide's CronJob runs in a mount namespace of its own: root required; CI is set")
		}
		t.Skip("the guide's CronJob runs in a mount namespace of its own: run ./scripts/test as root")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts = map[string]*clientcmdapi.Context{"prod": cfg.Contexts[cfg.CurrentContext]}
	cfg.CurrentContext = "prod"
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)

	repo := fmt.Sprintf("%s/guide-kube-%d/forge/forgejo", reg, time.Now().UnixNano())
	running := testimage.PushRelease(t, repo, "1.27.3", "2026-09-01", testimage.Options{Content: "1.27.3"}).DigestStr()
	k := testenv.NewCluster(t, kc)
	ns := k.Namespace(t, "pin-guide")
	rs := k.Deployment(t, ns, "forgejo", "forgejo-7c5d9")
	k.RunningPod(t, ns, "forgejo-7c5d9-aaaaa", rs, repo+":1.27.3", repo+"@"+running)
	k.RunningPod(t, ns, "forgejo-7c5d9-bbbbb", rs, repo+":1.27.3", repo+"@"+running)
	norm := append(normalizer{repo, "registry.example.org/forge/forgejo"}, digestAs(running, "3f6d1ac9a1c2")...)

	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples", "kubernetes"), os.DirFS(filepath.Join(repoRoot, "examples", "kubernetes"))); err != nil {
		t.Fatal(err)
	}
	cat := strings.Join(docBlock(t, guide, "A catalogue names it:"), "\n")
	for _, s := range []string{`namespace = "apps"`, `"registry.example.org/forge/forgejo"`} {
		if !strings.Contains(cat, s) {
			t.Fatalf("%s: the catalogue has no %s to replace with the test's:\n%s", guide, s, cat)
		}
	}
	cat = strings.NewReplacer(`namespace = "apps"`, fmt.Sprintf("namespace = %q", ns), "registry.example.org/forge/forgejo", repo).Replace(cat)
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)

	for _, l := range shBlock(t, guide, "Where forgejo's pods run 1.27.3:") {
		if l.words[0] != "pin" {
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
		r := pin(t, dir, l.words[1:]...)
		if r.code != l.code {
			t.Fatalf("%s: exit %d, the guide says %d\n%s%s", l.text, r.code, l.code, r.stdout, r.stderr)
		}
		if l.text == "pin plan prod" {
			reproduces(t, l.text, docBlock(t, guide, "and `pin plan prod` finds them"), norm.apply(r.stdout))
		}
	}

	for _, l := range shBlock(t, guide, "From this repository's root") {
		line := strings.ReplaceAll(l.text, " -n apps ", " -n "+ns+" ")
		if line == l.text && l.words[0] == "kubectl" {
			t.Fatalf("%s: %q names no namespace apps to replace with the test's", guide, l.text)
		}
		shell(t, dir, nil, line)
	}

	// The job, as its pod would run it.
	var job batchv1.CronJob
	if err := json.Unmarshal([]byte(shell(t, dir, nil, "kubectl get cronjob pin-outdated -n "+ns+" -o json")), &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != "pin" || len(pod.Containers) != 1 {
		t.Fatalf("cronjob.yaml: service account %q, %d containers; the test runs one container as pin", pod.ServiceAccountName, len(pod.Containers))
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(shell(t, dir, nil, "kubectl get configmap pin -n "+ns+" -o json")), &cm); err != nil {
		t.Fatal(err)
	}
	etc, cache := t.TempDir(), t.TempDir()
	for name, text := range cm.Data {
		writeFile(t, filepath.Join(etc, name), text)
	}
	mounts := map[string]string{}
	for _, v := range pod.Containers[0].VolumeMounts {
		mounts[v.Name] = v.MountPath
	}
	if mounts["pin"] != "/etc/pin" || mounts["cache"] != "/cache" {
		t.Fatalf("cronjob.yaml mounts %v; the test puts the ConfigMap at /etc/pin and the cache at /cache", mounts)
	}
	var args []string
	for _, a := range pod.Containers[0].Args {
		args = append(args, strings.NewReplacer("=/etc/pin/", "="+etc+"/", "=/cache", "="+cache).Replace(a))
	}
	sa := t.TempDir()
	tr, err := k.CS.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), "pin",
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cl := cfg.Clusters[cfg.Contexts["prod"].Cluster]
	u, err := url.Parse(cl.Server)
	if err != nil {
		t.Fatal(err)
	}
	ca := mustRead(t, cl.CertificateAuthority)
	for name, b := range map[string]string{"token": tr.Status.Token, "ca.crt": string(ca), "namespace": ns} {
		writeFile(t, filepath.Join(sa, name), b)
	}
	argv, _ := json.Marshal(args)
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "KUBERNETES_") {
			env = append(env, e)
		}
	}
	env = append(env, "SA="+sa, "HOME="+t.TempDir(), "KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port(),
		"PIN_TEST_GUIDE_POD="+string(argv), "PIN_TEST_GUIDE_POD_DIR="+t.TempDir())
	const secrets = "/var/run/secrets/kubernetes.io/serviceaccount"
	script := `mount -t tmpfs pin-test /run && mkdir -p ` + secrets + ` && cp "$SA"/* ` + secrets + `/ && exec "$@"`
	// RBAC learns of the binding through a watch: retry until it has.
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
			os.Args[0], "-test.run", "^TestGuideKubernetesPod$", "-test.count", "1", "-test.v")
		cmd.Env = env
		b, _ := cmd.CombinedOutput()
		out = string(b)
		if !strings.Contains(out, "forbidden") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, log, ok := strings.Cut(out, "POD LOG\n")
	log, code, ok2 := strings.Cut(log, "POD EXIT ")
	if !ok || !ok2 {
		t.Fatalf("the job's pod printed no log:\n%s", out)
	}
	if code = strings.Fields(code)[0]; code != "0" {
		t.Errorf("the job's pin outdated: exit %s, want 0 (the lock names what runs)\n%s", code, log)
	}
	reproduces(t, "the job's log", docBlock(t, guide, "its log is the table:"), trimLines(norm.apply(log)))
}

// TestGuideKubernetesPod is the CronJob's pod of TestGuideKubernetes: pin
// with the job's args, in-cluster.
func TestGuideKubernetesPod(t *testing.T) {
	argv := os.Getenv("PIN_TEST_GUIDE_POD")
	if argv == "" {
		t.Skip("run by TestGuideKubernetes")
	}
	var args []string
	if err := json.Unmarshal([]byte(argv), &args); err != nil {
		t.Fatal(err)
	}
	r := pin(t, os.Getenv("PIN_TEST_GUIDE_POD_DIR"), args...)
	fmt.Printf("POD LOG\n%s%sPOD EXIT %d\n", r.stdout, r.stderr, r.code)
}
