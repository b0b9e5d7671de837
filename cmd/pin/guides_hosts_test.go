package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
	"github.com/pin-tool/pin/internal/testkit/verifytest"
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
// after marker: a line ending in a backslash goes on on the next, and a
// comment starts at a "#" after a blank, outside quotes.
func shBlock(t *testing.T, guide, marker string) []shLine {
	t.Helper()
	var out []shLine
	pending := ""
	for _, l := range docBlock(t, guide, marker) {
		if c, ok := strings.CutSuffix(l, "\\"); ok {
			pending += c
			continue
		}
		l, pending = pending+l, ""
		cmd, comment := cutComment(l)
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

// cutComment splits a shell line at its comment.
func cutComment(l string) (cmd, comment string) {
	quote := rune(0)
	for i, r := range l {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i], l[i:]
		}
	}
	return l, ""
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
	needTool(t, "docker-compose") // Debian's, Compose 1.29: the guide's "docker compose"
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
// /path/to/pin this repository, registry.example.org/forge/forgejo a repository of the test registry,
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

	for _, l := range shBlock(t, guide, "In the catalogue's folder") {
		line := strings.NewReplacer(" -n apps ", " -n "+ns+" ", "/path/to/pin/", repoRoot+"/").Replace(l.text)
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

	// The admission webhook: pin admit on the workstation's catalogue and
	// lock, registered with the API server for this namespace's
	// Deployments.
	norm = append(norm, digestAs(testimage.PushRelease(t, repo, "1.22.6", "2024-12-12", testimage.Options{Content: "1.22.6"}).DigestStr(), "c0d5e8a2f417")...)
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	addr := freePort(t)
	stop := serve(t, "admit", "--catalogue", filepath.Join(dir, "catalogue.hcl"), "--lock", filepath.Join(dir, "pin.lock.hcl"),
		"--listen", addr, "--tls-cert", certFile, "--tls-key", keyFile)
	k.DeploymentWebhook(t, "pin-guide-"+ns, ns, "https://"+addr+"/validate", mustRead(t, certFile), 10)
	for _, l := range shBlock(t, guide, "Once it is registered:") {
		line := strings.NewReplacer(" -n apps ", " -n "+ns+" ", "registry.example.org/forge/forgejo", repo).Replace(l.text)
		out, code := shellCode(t, dir, nil, line)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s(exit %d)", line, out, code)
		}
		if code != l.code {
			t.Fatalf("%s: exit %d, the guide says %d\n%s", l.text, code, l.code, out)
		}
		switch {
		case code != 0:
			reproduces(t, l.text, docBlock(t, guide, "The first is refused:"), norm.apply(out))
		case l.words[3] == "set":
			reproduces(t, l.text, docBlock(t, guide, "Once the Deployment says why"), norm.apply(out))
		}
	}
	var d appsv1.Deployment
	if err := json.Unmarshal([]byte(shell(t, dir, nil, "kubectl get deployment forgejo -n "+ns+" -o json")), &d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != repo+":1.22.6" {
		t.Errorf("the Deployment's image is %s after the allowed rollback, want %s:1.22.6", got, repo)
	}
	if _, log := stop(); !strings.Contains(log, "rollback of 1.27: data bug #123") {
		t.Errorf("pin admit did not log the reason:\n%s", log)
	}
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

// shellCode is shell that returns the exit code rather than failing.
func shellCode(t *testing.T, dir string, env []string, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("%s: %v", line, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// TestGuideAuthz runs docs/guides/authz.md word for word: its catalogue,
// pin authz as written (in-process, as cmd/pin runs it) before a dockerd
// of the test's own started with --authorization-plugin, then the Docker
// CLI commands as written, the downgrade refused with the words the guide
// shows and the labelled one run and logged with its reason. The lock is
// made as the guide says, by pin resolve once forgejo runs 1.27.3, and the
// plugin restarted to read it. The substitutions: /etc/pin is a folder of
// the test's, the plugin's name pin is one of the test's (its socket
// /run/docker/plugins/NAME.sock, where the Engine finds it), "…" of the
// dockerd line is the test's flags for an Engine of its own (data and
// exec roots, socket, no bridge), the Engine's socket is that Engine's,
// registry.example.org/forge/forgejo a repository of the test registry,
// and docker run gets --network none (the test Engine has no bridge).
func TestGuideAuthz(t *testing.T) {
	const guide = "docs/guides/authz.md"
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		t.Fatal("dockerd not in PATH although the suite's Engine runs")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, err := os.MkdirTemp("/tmp", "pin-guide-authz-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.UnmountUnder(dir); os.RemoveAll(dir) })
	engine := "unix://" + filepath.Join(dir, "docker.sock")
	plugin := fmt.Sprintf("pin-guide-%d", time.Now().UnixNano()%1e9)
	repo := fmt.Sprintf("%s/guide-authz-%d/forge/forgejo", reg, time.Now().UnixNano())
	release := func(tag, date string) string {
		return testimage.PushRelease(t, repo, tag, date, testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath}}).DigestStr()
	}
	norm := normalizer{repo, "registry.example.org/forge/forgejo", "plugin " + plugin, "plugin pin"}
	norm = append(norm, digestAs(release("1.22.6", "2024-12-12"), "ac2ae63a9f11")...)
	norm = append(norm, digestAs(release("1.27.3", "2026-09-01"), "4449dc564f16")...)

	etc := filepath.Join(dir, "etc")
	os.Mkdir(etc, 0o755)
	cat := strings.Join(docBlock(t, guide, "whose catalogue names the Engine"), "\n")
	for _, s := range []string{`"unix:///var/run/docker.sock"`, `"registry.example.org/forge/forgejo"`} {
		if !strings.Contains(cat, s) {
			t.Fatalf("%s: the catalogue has no %s to replace with the test's:\n%s", guide, s, cat)
		}
	}
	writeFile(t, filepath.Join(etc, "catalogue.hcl"), strings.NewReplacer("unix:///var/run/docker.sock", engine, "registry.example.org/forge/forgejo", repo).Replace(cat))
	subst := strings.NewReplacer("/etc/pin/", etc+"/", "/run/docker/plugins/pin.sock", "/run/docker/plugins/"+plugin+".sock")

	var authzArgs []string
	var stopPlugin func() (int, string)
	var stopEngine func()
	docker := []string{"DOCKER_HOST=" + engine, "DOCKER_CONFIG=" + filepath.Join(dir, "cli")}
	for _, l := range shBlock(t, guide, "as root, with the catalogue and the lock") {
		switch {
		case l.words[0] == "mkdir":
			shell(t, dir, nil, l.text)
		case l.words[0] == "pin" && l.words[1] == "authz" && l.words[len(l.words)-1] == "&":
			for _, w := range l.words[1 : len(l.words)-1] {
				authzArgs = append(authzArgs, subst.Replace(w))
			}
			stopPlugin = serve(t, authzArgs...)
			waitSocket(t, "/run/docker/plugins/"+plugin+".sock")
		case l.text == "dockerd --authorization-plugin=pin …":
			stopEngine = startDockerd(t, dockerd, dir, engine, docker, "--authorization-plugin="+plugin)
		default:
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
	}
	if stopPlugin == nil || stopEngine == nil {
		t.Fatalf("%s: the guide starts no plugin or no Engine", guide)
	}
	defer stopEngine()

	// forgejo runs 1.27.3 and pin resolve locks it; the plugin restarts to
	// read the lock.
	shell(t, dir, docker, "docker run -d --network none --name forgejo "+repo+":1.27.3")
	t.Cleanup(func() { shellCode(t, dir, docker, "docker rm -f forgejo") })
	if r := pin(t, dir, "resolve", "--catalogue", filepath.Join(etc, "catalogue.hcl"), "--lock", filepath.Join(etc, "pin.lock.hcl")); r.code != exitOK {
		t.Fatalf("pin resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	stopPlugin()
	stopPlugin = serve(t, authzArgs...)
	waitSocket(t, "/run/docker/plugins/"+plugin+".sock")

	run := func(l shLine) (string, int) {
		if l.words[0] != "docker" {
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
		line := strings.ReplaceAll(l.text, "registry.example.org/forge/forgejo", repo)
		if l.words[1] == "run" {
			line = strings.Replace(line, "docker run ", "docker run --network none ", 1)
		}
		out, code := shellCode(t, dir, docker, line)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s(exit %d)", line, out, code)
		}
		return norm.apply(out), code
	}
	for _, l := range shBlock(t, guide, "Then, where `forge` runs 1.27.3") {
		out, code := run(l)
		switch l.words[1] {
		case "rm":
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s", l.text, code, out)
			}
		case "run":
			if code == 0 {
				t.Fatalf("%s: the Engine ran it, the guide says it refuses\n%s", l.text, out)
			}
			reproduces(t, l.text, docBlock(t, guide, "is refused by the Engine"), out)
		}
	}
	for _, l := range shBlock(t, guide, "A downgrade someone means is labelled") {
		if out, code := run(l); code != 0 {
			t.Fatalf("%s: exit %d, the guide says it runs\n%s", l.text, code, out)
		}
	}
	stopEngine()
	_, log := stopPlugin()
	if os.Getenv("PIN_GUIDE_SHOW") != "" {
		t.Logf("the plugin's log:\n%s", log)
	}
	reproduces(t, "the plugin's log", docBlock(t, guide, "the plugin logs it with the reason"), norm.apply(log))
}

// waitSocket waits until a unix socket answers.
func waitSocket(t *testing.T, path string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing answers on %s", path)
}

// startDockerd starts a dockerd of the test's own, its data under dir,
// listening on engine, with flags added; it waits until the Engine answers and
// returns how to stop it (also done at the end of the test).
func startDockerd(t *testing.T, dockerd, dir, engine string, env []string, flags ...string) (stop func()) {
	t.Helper()
	d := testenv.Dockerd(t, dockerd, dir, engine, flags...)
	return testenv.StartDaemon(t, d, filepath.Join(dir, "dockerd.log"), func() bool {
		_, code := shellCode(t, dir, env, "docker version")
		return code == 0
	})
}

// TestGuideSignatures runs docs/guides/signatures.md's example word for
// word with the real cosign CLI and the test registry: cosign
// generate-key-pair, cosign sign as written for 1.0.0 and 1.1.0 of web
// (1.2.0 left unsigned), the guide's catalogue, then pin resolve, pin
// outdated and pin verify with the output the guide shows. The
// substitutions: registry.example.org is the test registry, "sha256:…" of
// the sign command the digest of each release signed, and cosign gets the
// flags for a registry over plain http on loopback
// (--allow-insecure-registry --allow-http-registry) and --yes, its
// password in COSIGN_PASSWORD; the pushed digests read as the ones shown.
// Then the keyless module as written, ghcr.io/example/web a repository of
// the test registry, its releases signed by a test Sigstore for the
// guide's identities, and pin outdated saying why the one signed by
// another workflow is not taken.
func TestGuideSignatures(t *testing.T) {
	const guide = "docs/guides/signatures.md"
	reg := testenv.Registry(t)
	cs := testenv.Cosign(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	repo := fmt.Sprintf("%s/guide-signatures-%d/web", reg, time.Now().UnixNano())
	release := func(tag, date string) string {
		return testimage.PushRelease(t, repo, tag, date, testimage.Options{Content: "web " + tag}).DigestStr()
	}
	signed := []string{release("1.0.0", "2026-08-01"), release("1.1.0", "2026-09-01")}
	unsigned := release("1.2.0", "2026-10-01")
	norm := normalizer{repo, "registry.example.org/web", reg, "registry.example.org"}
	norm = append(norm, digestAs(signed[0], "6a1e58d0c8f2")...)
	norm = append(norm, digestAs(signed[1], "b7c40e1f93a5")...)
	norm = append(norm, digestAs(unsigned, "e20d9a7c4b61")...)

	cosign := func(words []string) {
		t.Helper()
		args := words[1:]
		if args[0] == "sign" {
			args = append([]string{"sign", "--allow-insecure-registry", "--allow-http-registry", "--yes"}, args[1:]...)
		}
		cmd := exec.Command(cs.Bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+cs.Password(), "COSIGN_EXPERIMENTAL=1", "HOME="+dir,
			"TUF_ROOT="+filepath.Join(dir, ".sigstore"), "SIGSTORE_NO_CACHE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, l := range shBlock(t, guide, "with a key made once") {
		switch {
		case l.text == "cosign generate-key-pair":
			cosign(l.words)
		case l.words[0] == "cosign" && l.words[1] == "sign" && strings.HasSuffix(l.text, " registry.example.org/web@sha256:…"):
			for _, d := range signed {
				w := slices.Clone(l.words)
				w[len(w)-1] = repo + "@" + d
				cosign(w)
			}
		default:
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
	}
	cat := strings.Join(docBlock(t, guide, "who must have signed:"), "\n")
	if !strings.Contains(cat, `registry "registry.example.org"`) || !strings.Contains(cat, `"registry.example.org/web"`) {
		t.Fatalf("%s: the catalogue names no registry.example.org to replace with the test registry:\n%s", guide, cat)
	}
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), strings.NewReplacer("registry.example.org/web", repo, "registry.example.org", reg).Replace(cat))

	outputs := map[string]string{
		"pin resolve":  "`pin resolve` locks the newest tag that verifies",
		"pin outdated": "`pin outdated` reports it:",
		"pin verify":   "asking no host; it exits 1 if one no longer",
	}
	for _, l := range shBlock(t, guide, "Then:") {
		if l.words[0] != "pin" || outputs[l.text] == "" {
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
		r := pin(t, dir, l.words[1:]...)
		got := norm.apply(r.stdout + r.stderr)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s(exit %d)", l.text, got, r.code)
		}
		if r.code != l.code {
			t.Errorf("%s: exit %d, the guide says %d\n%s", l.text, r.code, l.code, got)
		}
		reproduces(t, l.text, docBlock(t, guide, outputs[l.text]), trimLines(got))
	}

	// Keyless: the guide's module as written, its images signed by a
	// Sigstore of the test's (sigstore-go's VirtualSigstore: a Fulcio-like
	// authority, a log and a timestamp authority; cosign cannot sign
	// keyless offline), whose trusted root is the trusted_root.json the
	// guide says you provide.
	ss := verifytest.NewSigstore(t)
	ghcr := fmt.Sprintf("%s/guide-keyless-%d/example/web", reg, time.Now().UnixNano())
	const issuer = "https://token.actions.githubusercontent.com"
	k10 := testimage.PushRelease(t, ghcr, "1.0.0", "2026-08-01", testimage.Options{Content: "keyless 1.0.0"}).DigestStr()
	ss.SignKeyless(t, "https://github.com/example/web/.github/workflows/release.yml@refs/tags/v1.0.0", issuer, ghcr, k10)
	k11 := testimage.PushRelease(t, ghcr, "1.1.0", "2026-09-01", testimage.Options{Content: "keyless 1.1.0"}).DigestStr()
	ss.SignKeyless(t, "https://github.com/example/web/.github/workflows/ci.yml@refs/heads/main", issuer, ghcr, k11)
	keyless := t.TempDir()
	writeFile(t, filepath.Join(keyless, "trusted_root.json"), string(mustRead(t, ss.RootPath)))
	cat = strings.Join(docBlock(t, guide, "against a Sigstore trusted root you provide:"), "\n")
	if !strings.Contains(cat, `"ghcr.io/example/web"`) {
		t.Fatalf("%s: the keyless module names no ghcr.io/example/web to replace with the test registry:\n%s", guide, cat)
	}
	writeFile(t, filepath.Join(keyless, "catalogue.hcl"), strings.ReplaceAll(cat, "ghcr.io/example/web", ghcr))
	kn := normalizer{ghcr, "ghcr.io/example/web"}
	kn = append(kn, digestAs(k10, "41c9b7e02d58")...)
	kn = append(kn, digestAs(k11, "9e6f03a7c1b4")...)
	if r := pin(t, keyless, "resolve"); r.code != exitOK || !strings.Contains(r.stdout, "add 1.0.0") {
		t.Fatalf("keyless: pin resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := pin(t, keyless, "outdated")
	got := trimLines(kn.apply(r.stdout + r.stderr))
	if os.Getenv("PIN_GUIDE_SHOW") != "" {
		t.Logf("$ pin outdated (keyless)\n%s(exit %d)", got, r.code)
	}
	if r.code != exitFindings {
		t.Errorf("pin outdated, keyless: exit %d, the guide says 1\n%s", r.code, got)
	}
	reproduces(t, "pin outdated, keyless", docBlock(t, guide, "says why 1.1.0 is not taken (exit 1):"), got)
}

// TestGuideFleets runs docs/guides/fleets.md word for word: the agent's
// catalogue on a dockerd of the test's own where forgejo runs 1.27.3, the
// systemd unit's ExecStart as written (pin in-process; the cron line's
// command is checked to be the same), a key pair the real cosign CLI
// made, then the reader's catalogue and pin resolve, with the output the
// guide shows. The substitutions: /etc/pin is a folder of the test's, the
// agent's socket is the test Engine's, registry.example.org a folder of
// the test registry, COSIGN_PASSWORD the key's password (the unit's
// EnvironmentFile), and the pushed digest reads as the one shown.
func TestGuideFleets(t *testing.T) {
	const guide = "docs/guides/fleets.md"
	testenv.DockerHost(t) // root and a Docker Engine: skip, or fail under CI
	reg := testenv.Registry(t)
	cs := testenv.Cosign(t)
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		t.Fatal("dockerd not in PATH although the suite's Engine runs")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("COSIGN_PASSWORD", cs.Password())
	dir, err := os.MkdirTemp("/tmp", "pin-guide-fleet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.UnmountUnder(dir); os.RemoveAll(dir) })
	engine := "unix://" + filepath.Join(dir, "docker.sock")
	docker := []string{"DOCKER_HOST=" + engine, "DOCKER_CONFIG=" + filepath.Join(dir, "cli")}
	stopEngine := startDockerd(t, dockerd, dir, engine, docker)
	defer stopEngine()

	fake := fmt.Sprintf("%s/guide-fleet-%d", reg, time.Now().UnixNano()) // registry.example.org
	running := testimage.PushRelease(t, fake+"/forge/forgejo", "1.27.3", "2026-09-01",
		testimage.Options{Layer: testimage.Sleeper(t), Entrypoint: []string{testimage.SleeperPath}}).DigestStr()
	shell(t, dir, docker, "docker run -d --network none --name forgejo "+fake+"/forge/forgejo:1.27.3")
	norm := append(normalizer{fake, "registry.example.org"}, digestAs(running, "5be0a1c4e7d2")...)

	// The agent, on edge-17.
	etc := filepath.Join(dir, "etc")
	os.Mkdir(etc, 0o755)
	agentCat := strings.Join(docBlock(t, guide, "a\ncatalogue naming the host itself:"), "\n")
	if !strings.Contains(agentCat, `"unix:///var/run/docker.sock"`) {
		t.Fatalf("%s: the agent's catalogue names no docker socket to replace with the test engine's:\n%s", guide, agentCat)
	}
	writeFile(t, filepath.Join(etc, "catalogue.hcl"), strings.ReplaceAll(agentCat, "unix:///var/run/docker.sock", engine))
	writeFile(t, filepath.Join(etc, "cosign.key"), string(mustRead(t, cs.Key)))
	subst := strings.NewReplacer("/etc/pin/", etc+"/", "registry.example.org/", fake+"/")
	var unit []string
	for _, l := range docBlock(t, guide, "and a systemd timer:") {
		if c, ok := strings.CutPrefix(l, "ExecStart=/usr/local/bin/pin "); ok {
			unit = strings.Fields(c)
		}
	}
	if len(unit) == 0 {
		t.Fatalf("%s: the unit has no ExecStart=/usr/local/bin/pin", guide)
	}
	cron := strings.Join(docBlock(t, guide, "or a cron line:"), "\n")
	if _, c, ok := strings.Cut(cron, " pin "); !ok || strings.Join(strings.Fields(c), " ") != strings.Join(unit, " ") {
		t.Errorf("%s: the cron line's command is not the unit's:\n%s\n%s", guide, cron, strings.Join(unit, " "))
	}
	var args []string
	for _, w := range unit {
		args = append(args, subst.Replace(w))
	}
	if r := pin(t, dir, args...); r.code != exitOK || !strings.Contains(r.stdout, "published as "+fake+"/fleet/observations@sha256:") {
		t.Fatalf("pin %s: exit %d\n%s%s", strings.Join(unit, " "), r.code, r.stdout, r.stderr)
	}

	// Where pin runs: the registry only; the host is stopped.
	stopEngine()
	reader := t.TempDir()
	writeFile(t, filepath.Join(reader, "fleet.pub"), string(mustRead(t, cs.Pub)))
	cat := strings.Join(docBlock(t, guide, "and the modules as for any host:"), "\n")
	if !strings.Contains(cat, `"oci://registry.example.org/fleet/observations"`) {
		t.Fatalf("%s: the reader's catalogue names no registry.example.org to replace with the test registry:\n%s", guide, cat)
	}
	writeFile(t, filepath.Join(reader, "catalogue.hcl"), strings.ReplaceAll(cat, "registry.example.org/", fake+"/"))
	r := pin(t, reader, "resolve")
	got := norm.apply(r.stdout + r.stderr)
	if os.Getenv("PIN_GUIDE_SHOW") != "" {
		t.Logf("$ pin resolve\n%s(exit %d)", got, r.code)
	}
	if r.code != exitOK {
		t.Fatalf("pin resolve: exit %d\n%s", r.code, got)
	}
	reproduces(t, "pin resolve", docBlock(t, guide, "`pin resolve` reads its last\nobservation"), got)
}

// cloneHead is a git clone of this repository's HEAD, and HEAD's commit.
func cloneHead(t *testing.T) (dir, head string) {
	t.Helper()
	needTool(t, "git")
	if _, err := os.Stat(filepath.Join(repoRoot, ".git")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not a git checkout (CI is set): %v", repoRoot, err)
		}
		t.Skipf("%s is not a git checkout: %v", repoRoot, err)
	}
	dir = filepath.Join(t.TempDir(), "pin")
	shell(t, repoRoot, nil, "git clone -q --no-hardlinks . "+dir)
	return dir, strings.TrimSpace(shell(t, dir, nil, "git rev-parse HEAD"))
}

// newcomerGo is the go command's environment on a newcomer's machine: no
// go env file (a developer's may set GOFLAGS=-buildvcs=false there),
// GOFLAGS empty, this toolchain, and GOPROXY off (the module cache holds
// what the build needs: the tests run offline).
func newcomerGo() []string {
	return []string{"GOENV=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off"}
}

// TestGuideInstall runs docs/guides/install.md's commands that build pin
// from a checkout, word for word, in a git clone of this repository's
// HEAD: go build -o pin ./cmd/pin and go install ./cmd/pin (GOBIN a folder
// of the test's), each binary's --version (and "pin version") printing
// what the guide shows and the clone's commit; a build with
// -buildvcs=false prints the guide's "no revision" line. go install
// …@latest cannot run offline: its module path is checked to be go.mod's.
// The environment is a newcomer's: no go env file and GOFLAGS empty (a
// developer's machine may set -buildvcs=false there), GOPROXY off (the
// module cache holds what the build needs); this toolchain's version
// reads as the guide's go1.26.8.
func TestGuideInstall(t *testing.T) {
	const guide = "docs/guides/install.md"
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("TestGuideInstall runs in CI: do not pass -short there")
		}
		t.Skip("builds pin three times: not with -short")
	}
	needTool(t, "go")
	clone, head := cloneHead(t)
	gobin := t.TempDir()
	env := append(newcomerGo(), "GOBIN="+gobin)
	norm := normalizer{runtime.Version(), "go1.26.8"}

	first := shBlock(t, guide, "With Go 1.26 or later")
	module := strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(mustRead(t, filepath.Join(repoRoot, "go.mod"))), "\n", 2)[0], "module"))
	if len(first) != 2 || first[0].text != "go install "+module+"/cmd/pin@latest" || first[1].text != "pin --version" {
		t.Fatalf("%s: the first block is not go install %s/cmd/pin@latest and pin --version: %+v", guide, module, first)
	}
	want := docBlock(t, guide, "which names the commit it was built from")
	version := func(bin string) {
		t.Helper()
		for _, arg := range []string{"--version", "version"} {
			got := norm.apply(shell(t, clone, env, bin+" "+arg))
			reproduces(t, bin+" "+arg, want, got)
			if !strings.Contains(got, " revision "+head+" ") {
				t.Errorf("%s %s names no revision %s:\n%s", bin, arg, head, got)
			}
		}
	}
	for _, l := range shBlock(t, guide, "from a clone of this repository:") {
		switch l.text {
		case "go build -o pin ./cmd/pin":
			shell(t, clone, env, l.text)
			// The comment's alternative.
			shell(t, clone, env, "go install ./cmd/pin")
			version(filepath.Join(gobin, "pin"))
		case "./pin --version":
			version("./pin")
		default:
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
	}
	shell(t, clone, env, "go build -buildvcs=false -o pin-novcs ./cmd/pin")
	got := norm.apply(shell(t, clone, env, "./pin-novcs --version"))
	guideText := strings.Join(strings.Fields(string(mustRead(t, filepath.Join(repoRoot, guide)))), " ")
	line := regexp.MustCompile("`(pin \\(devel\\), built with [^`]*)`").FindStringSubmatch(guideText)
	if line == nil {
		t.Fatalf("%s shows no `pin (devel), built with …` line", guide)
	}
	reproduces(t, "pin --version, -buildvcs=false", []string{line[1]}, got)
}

// TestGuideInstallImage runs the container image section of
// docs/guides/install.md word for word in a git clone of HEAD: pinimage
// --push to the test registry and --tarball, then the comment's docker load
// on the test Engine; the image run as the checkout's owner (resolve, then
// resolve --check as the image's user); and in the clone made uid 1000's,
// with no lock, resolve as the image's user refused with the words the
// guide shows. The substitutions: registry.example.org is the test
// registry, the Docker CLI talks to the test Engine, and docker run gets
// --network none (the test Engine has no bridge; the repository's
// catalogue reads a snapshot and a layout mirror).
func TestGuideInstallImage(t *testing.T) {
	const guide = "docs/guides/install.md"
	if testing.Short() {
		t.Skip("builds pin's image: not with -short")
	}
	reg := testenv.Registry(t)
	dh := dockerCLIHost(t)
	needTool(t, "go")
	clone, _ := cloneHead(t)
	env := append(newcomerGo(), "DOCKER_HOST="+dh, "DOCKER_CONFIG="+t.TempDir())
	tools := fmt.Sprintf("%s/guide-install-%d/tools", reg, time.Now().UnixNano())
	t.Cleanup(func() { shellCode(t, clone, env, "docker rmi -f pin:dev") })

	docker := func(l shLine) (string, int) {
		t.Helper()
		line := strings.Replace(l.text, "docker run ", "docker run --network none ", 1)
		out, code := shellCode(t, clone, env, line)
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s(exit %d)", line, out, code)
		}
		if code != l.code {
			t.Fatalf("%s: exit %d, the guide says %d\n%s", l.text, code, l.code, out)
		}
		return out, code
	}
	for _, l := range shBlock(t, guide, "yours or load it into an Engine:") {
		if !strings.HasPrefix(l.text, "go run ./internal/release/cmd/pinimage ") {
			t.Fatalf("%s: the guide runs %q, which this test does not", guide, l.text)
		}
		line := strings.ReplaceAll(l.text, "registry.example.org/tools/", tools+"/")
		out := shell(t, clone, env, line)
		if strings.Contains(line, "--push") && !strings.HasPrefix(out, tools+"/pin@sha256:") {
			t.Errorf("%s printed %q, not the pushed image", l.text, out)
		}
		_, comment := cutComment(docBlockLine(t, guide, "yours or load it into an Engine:", l.text))
		if then, ok := strings.CutPrefix(comment, "# then: "); ok {
			shell(t, clone, env, then)
		}
	}
	for _, l := range shBlock(t, guide, "and run with the repository mounted at `/work`, as its owner:") {
		docker(l)
		if _, err := os.Stat(filepath.Join(clone, "pin.lock.hcl")); err != nil {
			t.Fatalf("%s: no lock in the checkout: %v", l.text, err)
		}
	}

	// A clone of uid 1000's, with no lock.
	os.Remove(filepath.Join(clone, "pin.lock.hcl"))
	shell(t, clone, nil, "chown -R 1000:1000 .")
	for _, l := range shBlock(t, guide, "In a clone of uid 1000's:") {
		out, _ := docker(l)
		reproduces(t, l.text, docBlock(t, guide, "`resolve` exits 2, the lock as it was"), out)
		if _, err := os.Stat(filepath.Join(clone, "pin.lock.hcl")); !os.IsNotExist(err) {
			t.Errorf("%s: a refused resolve wrote the lock (%v)", l.text, err)
		}
	}
}

// docBlockLine is the line of the guide's block after marker that holds
// the command text (with its comment).
func docBlockLine(t *testing.T, guide, marker, text string) string {
	t.Helper()
	for _, l := range docBlock(t, guide, marker) {
		if strings.HasPrefix(l, text) {
			return l
		}
	}
	t.Fatalf("%s: no line %q after %q", guide, text, marker)
	return ""
}
