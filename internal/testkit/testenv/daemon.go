package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Dockerd is the command of a dockerd of a test's own, listening on host
// (unix://…), with everything it keeps under dir: vfs storage, no
// networking set-up (no iptables, no bridge), its own containerd
// namespaces (the suite's Engine shares containerd), an empty daemon.json;
// flags are added after. Start it with StartDaemon.
func Dockerd(t testing.TB, dockerd, dir, host string, flags ...string) *exec.Cmd {
	t.Helper()
	conf := filepath.Join(dir, "daemon.json")
	if err := os.WriteFile(conf, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := filepath.Base(dir)
	args := []string{"--iptables=false", "--ip6tables=false", "--bridge=none", "--storage-driver=vfs",
		"--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "docker.pid"),
		"--config-file", conf, "-H", host,
		"--containerd-namespace", ns, "--containerd-plugins-namespace", ns + "-plugins"}
	return exec.Command(dockerd, append(args, flags...)...)
}

// StartDaemon starts cmd, its output written to logPath, and waits up to
// 30 s for ready to report true. It fails the test, showing the log, when
// cmd exits first or is not ready in time. The daemon is stopped when the
// test ends (SIGTERM; killed after 30 s), or earlier by stop, which waits
// for it and does nothing once it has exited.
func StartDaemon(t testing.TB, cmd *exec.Cmd, logPath string, ready func() bool) (stop func()) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(exited) }()
	stop = func() {
		select {
		case <-exited:
			return
		default:
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	t.Cleanup(stop)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited:\n%s", filepath.Base(cmd.Path), b)
		default:
		}
		if ready() {
			return stop
		}
	}
	b, _ := os.ReadFile(logPath)
	t.Fatalf("%s did not answer in 30s:\n%s", filepath.Base(cmd.Path), b)
	return stop
}
