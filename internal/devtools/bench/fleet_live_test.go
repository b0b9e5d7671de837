//go:build unix

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/host/docker"
	"github.com/pin-tool/pin/internal/host/fleet"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// liveFleet reads n endpoints of the real engine (latency each), plus
// one unreachable host and one that answers after slow, with bound
// concurrency and a per-host timeout. It returns the results, the wall
// time, and the endpoints.
func liveFleet(t testing.TB, n, concurrency int, latency, slow, timeout time.Duration) (map[string]fleet.Result, time.Duration, *endpoints) {
	t.Helper()
	engine := testenv.DockerHost(t)
	e := startEndpoints(t, engine, n+1, latency)
	e.extra[n].Store(int64(slow))
	hosts := map[string]fleet.Observer{}
	for i := range n {
		hosts[hostName(i)] = docker.Host{Name: hostName(i), Addr: e.addrs[i], Timeout: timeout}
	}
	if slow > 0 {
		hosts["slow"] = docker.Host{Name: "slow", Addr: e.addrs[n], Timeout: timeout}
		hosts["down"] = docker.Host{Name: "down", Addr: unreachable(t), Timeout: timeout}
	}
	start := time.Now()
	got := fleet.Read(context.Background(), hosts, fleet.Options{Concurrency: concurrency, Timeout: timeout})
	return got, time.Since(start), e
}

// TestFleetLiveEndpoints: 20 hosts behind their own listeners on the
// real engine, one unreachable, one slower than its timeout: every other
// host is read, with the same requests each (nothing retried, nothing
// shared by mistake); the two are named.
func TestFleetLiveEndpoints(t *testing.T) {
	const n = 20
	got, _, e := liveFleet(t, n, 8, 5*time.Millisecond, 10*time.Second, 2*time.Second)
	for i := range n {
		if r := got[hostName(i)]; r.Err != nil || r.Snapshot == nil || r.Snapshot.Host != hostName(i) {
			t.Errorf("%s: %v", hostName(i), r.Err)
		}
	}
	var te *fleet.TimeoutError
	if r := got["slow"]; !errors.As(r.Err, &te) && !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("slow host: %v, want a timeout", r.Err)
	}
	if r := got["down"]; r.Err == nil {
		t.Errorf("unreachable host read: %+v", r.Snapshot)
	}
	counts := e.counts()
	for i := range n {
		// At least the ping and the container list; one host's
		// requests are another's (the same engine), give or take images
		// other tests add meanwhile.
		if counts[i] < 2 {
			t.Errorf("%s: %d requests, want at least the ping and the container list", hostName(i), counts[i])
		}
	}
}

// BenchmarkFleetLive reads PINBENCH_HOSTS (default 100) live endpoints,
// 20 ms each, PINBENCH_HOST_CONCURRENCY (default 8) at once, plus one
// unreachable and one slow host, and reports wall time against the floor
// ceil(hosts / concurrency) × requests per host × latency.
//
//	CI=true ./scripts/test -run XXX -bench FleetLive -benchtime 3x ./internal/bench
func BenchmarkFleetLive(b *testing.B) {
	n := envInt("PINBENCH_HOSTS", 100)
	conc := envInt("PINBENCH_HOST_CONCURRENCY", 8)
	const latency = 20 * time.Millisecond
	for b.Loop() {
		// With one unreachable and one slow host (its timeout 3s): the
		// others' reads, against the clean run's.
		faulty, faultyWall, _ := liveFleet(b, n, conc, latency, 10*time.Second, 3*time.Second)
		var faultyMax time.Duration
		for i := range n {
			faultyMax = max(faultyMax, faulty[hostName(i)].Took)
		}
		got, wall, e := liveFleet(b, n, conc, latency, 0, 3*time.Second)
		counts := e.counts()
		var total int64
		maxReq := int64(0)
		for i := range n {
			if got[hostName(i)].Err != nil {
				b.Fatalf("%s: %v", hostName(i), got[hostName(i)].Err)
			}
			total += counts[i]
			maxReq = max(maxReq, counts[i])
		}
		perHost := float64(total) / float64(n)
		// Floor: the hosts in ceil(n/conc) waves, each host's round trips
		// one after another: the ping, then the container list (and the
		// info at once with it, where the engine's API version cannot say
		// the image store), then the inspects, docker.InspectConcurrency
		// at once. The slow host costs its timeout in one slot.
		waves := (n + conc - 1) / conc
		infos := (e.engine[infoKind].n.Load() + int64(n) - 1) / int64(n) // per host: 0 or 1
		inspects := max(maxReq-2-infos, 0)
		inspectTrips := (inspects + docker.InspectConcurrency - 1) / docker.InspectConcurrency
		trips := 2 + inspectTrips
		floor := time.Duration(waves*int(trips)) * latency
		// The engine's own answer time, measured at the endpoints: one
		// engine answers all n hosts, so it is in every host's read,
		// which 100 engines would each answer alone. adj is the floor
		// with it counted in, level by level.
		eng := func(k int) time.Duration { return e.engineMean(k) }
		adj := time.Duration(waves) * (latency + eng(pingKind) + latency + max(eng(infoKind), eng(listKind)) +
			time.Duration(inspectTrips)*(latency+eng(inspectKind)))
		b.ReportMetric(wall.Seconds()/floor.Seconds(), "wall/floor")
		b.ReportMetric(wall.Seconds()/adj.Seconds(), "wall/adj")
		b.ReportMetric(perHost, "requests/host")
		b.ReportMetric(float64(wall.Milliseconds()), "wall-ms")
		b.ReportMetric(float64(floor.Milliseconds()), "floor-ms")
		b.ReportMetric(float64(maxRSS())/1024, "peak-RSS-MiB")
		fmt.Fprintf(os.Stderr, "fleet live: engine answer means: ping %s, info %s, list %s, inspect %s\n",
			eng(pingKind).Round(10*time.Microsecond), eng(infoKind).Round(10*time.Microsecond), eng(listKind).Round(10*time.Microsecond), eng(inspectKind).Round(10*time.Microsecond))
		var cleanMax time.Duration
		for i := range n {
			cleanMax = max(cleanMax, got[hostName(i)].Took)
		}
		fmt.Fprintf(os.Stderr, "fleet live: %d hosts, concurrency %d: wall %s, floor %s (%d waves × %d round trips × %s), %.1f requests/host; slowest host read %s; with 1 unreachable + 1 slow (timeout 3s): wall %s, slowest other host read %s\n",
			n, conc, wall.Round(time.Millisecond), floor, waves, trips, latency, perHost, cleanMax.Round(time.Millisecond), faultyWall.Round(time.Millisecond), faultyMax.Round(time.Millisecond))
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// maxRSS is the process's peak resident set, in KiB.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss
}
