package observe

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/image"
)

// Host is a machine whose containers pin reads: a live engine or a snapshot.
type Host interface {
	Observe(ctx context.Context) (*host.Snapshot, error)
}

// Observed is what every host answered, or the error it gave.
type Observed struct {
	Snapshots map[string]*host.Snapshot
	Errors    map[string]error
	// labelled, when Index built it, lists for each module name the hosts
	// (sorted) with a container labelled pin.module=<name>: Observations
	// then looks for labelled containers on those hosts only, not on every
	// host for every module.
	labelled map[string][]string
}

// Index indexes the snapshots' pin.module labels, so that Observations
// costs the same per module whatever the fleet's size. Call it once the
// snapshots are all in, and again after changing them; an Observed that
// was never indexed is searched whole.
func (o *Observed) Index() {
	o.labelled = map[string][]string{}
	for h, s := range o.Snapshots {
		for _, c := range s.Containers {
			if name := c.Labels[catalogue.ModuleLabel]; name != "" && !slices.Contains(o.labelled[name], h) {
				o.labelled[name] = append(o.labelled[name], h)
			}
		}
	}
	for _, hosts := range o.labelled {
		slices.Sort(hosts)
	}
}

// labelHosts are the hosts to look for containers labelled for module name
// on, sorted.
func (o Observed) labelHosts(name string) []string {
	if o.labelled != nil {
		return o.labelled[name]
	}
	hosts := make([]string, 0, len(o.Snapshots))
	for h := range o.Snapshots {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	return hosts
}

// Hosts reads all hosts concurrently. A host that fails does not stop
// the others: its error is kept by name.
func Hosts(ctx context.Context, hosts map[string]Host) Observed {
	out := Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, h := range hosts {
		wg.Go(func() {
			s, err := h.Observe(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.Errors[name] = err
				return
			}
			out.Snapshots[name] = s
		})
	}
	wg.Wait()
	out.Index()
	return out
}

// HostErrors are the failures of module m's runs_on hosts, each host
// once, in runs_on order, each a *SourceError naming it. Without every
// host of a module, its floors are not known.
func HostErrors(m *catalogue.Module, seen Observed) []error {
	var errs []error
	var failed []string
	for _, ro := range m.RunsOn {
		if err, ok := seen.Errors[ro.Host]; ok && !slices.Contains(failed, ro.Host) {
			failed = append(failed, ro.Host)
			errs = append(errs, &SourceError{Source: "host " + ro.Host, Err: err})
		}
	}
	return errs
}

// Observation is one container that a module takes over, and its image.
//
// On a Kubernetes host it is one container of a workload and one image:
// Container is "<kind>/<name>/<container>" ("deployment/forgejo/forgejo",
// "cronjob/backup/dump", "pod/debug/shell" for a pod nothing owns), and the
// replicas that run the same image are one observation, Replicas of them,
// in Pods. Replicas mid-rollout are one observation per image. The key
// names no pod, so that restarts, reschedules and scaling do not change it.
type Observation struct {
	Host      string
	Container string
	// State is the host's state word. Of replicas, it is "running" when one
	// of them runs, else the first of their states in order.
	State string
	// Replicas is how many pods run this container with this image (zero
	// off Kubernetes, and for a workload scaled to zero); Pods names them,
	// sorted. Neither is part of the lock: both change with scaling.
	Replicas int
	Pods     []string
	// Image is what the host knows of the image: the tag the container was
	// started from, the registry digest from the host's repo digests (empty
	// for a loaded or locally built image), the image ID, build date, labels
	// and platform.
	Image image.Image
	// TagClaimed: the container was started from "repo:tag@digest", which
	// is pulled by digest; no host resolved Image.Tag, which is only the
	// deployer's word (a claim, as a tag in a lock line is).
	TagClaimed bool
	// StartedAt and RestartCount are the container's, as its engine
	// reports them (host.Container), when the host was read with them;
	// zero otherwise. Of replicas, StartedAt is the latest start (zero
	// when one replica's is unknown) and RestartCount the largest: how
	// long all of them have run. Neither is part of the lock.
	StartedAt    time.Time
	RestartCount int
	// Health is what the engine reports of the container's health (exit
	// code, health check, Ready), read with StartedAt; of replicas, the
	// worst of theirs (host.Health.Worst). Not part of the lock.
	Health host.Health
}

// Running reports whether the container runs now (running, paused or
// restarting). Which containers bound the lock is package resolve's rule
// (resolve.IsFloor), not this.
func (o Observation) Running() bool {
	return host.Container{State: o.State}.Running()
}

// The states of package host a Kubernetes host reports, under the names
// observe's callers know them by: they are host's words.
const (
	StateScaledToZero = host.StateScaledToZero
	EphemeralPrefix   = host.EphemeralPrefix
)

// Ephemeral reports whether the container is an ephemeral (debug)
// container of a pod.
func (o Observation) Ephemeral() bool { return strings.HasPrefix(o.State, EphemeralPrefix) }

// Where renders "host/container".
func (o Observation) Where() string { return o.Host + "/" + o.Container }

// Observations finds the containers module m takes over: on each runs_on
// host, the container named there, or, where no container is named, those
// labelled pin.module=<module>; on a Kubernetes host, the containers of the
// pods of the runs_on workload or matching its selector (of the named
// container only, when one is named); on a Docker host with runs_on
// compose = "<project>/<service>", every container Compose labelled with
// that project and service (each scaled replica); and on every host, containers
// labelled with the module's name. missing lists the runs_on targets not
// found.
//
// A pod's containers are observed by workload, "<kind>/<name>/<container>",
// one observation per image they run (see Observation): replicas of one
// image are one observation, with their count and pods.
func Observations(m *catalogue.Module, seen Observed) (obs []Observation, missing []string) {
	type key struct{ host, id string }
	done := map[key]bool{}
	// group is where the replicas of one workload container and image
	// gather: the index of their observation in obs.
	group := map[key]int{}
	add := func(hostName string, s *host.Snapshot, c host.Container) {
		k := key{hostName, c.ID + "/" + c.Name}
		if done[k] {
			return
		}
		done[k] = true
		img, claimed := containerImage(m.Image, s, c)
		if c.Workload == "" {
			obs = append(obs, Observation{Host: hostName, Container: c.Name, State: c.State, Image: img, TagClaimed: claimed,
				StartedAt: c.StartedAt, RestartCount: c.RestartCount, Health: c.Health})
			return
		}
		where := c.Workload + "/" + c.Name
		g := key{hostName, where + "\x00" + cmp.Or(img.ImageID, img.Digest, c.Image)}
		i, ok := group[g]
		if !ok {
			i = len(obs)
			group[g] = i
			obs = append(obs, Observation{Host: hostName, Container: where, State: c.State, Image: img, TagClaimed: claimed,
				StartedAt: c.StartedAt, RestartCount: c.RestartCount, Health: c.Health})
		}
		o := &obs[i]
		if ok {
			switch {
			case o.StartedAt.IsZero() || c.StartedAt.IsZero():
				o.StartedAt = time.Time{}
			case c.StartedAt.After(o.StartedAt):
				o.StartedAt = c.StartedAt
			}
			o.RestartCount = max(o.RestartCount, c.RestartCount)
			o.Health = o.Health.Worst(c.Health)
		}
		if c.Pod == "" {
			return // read from a template: no replica
		}
		o.Replicas++
		o.Pods = append(o.Pods, c.Pod)
		if ok {
			o.State = replicaState(o.State, c.State)
			// Replicas of one image started from different references
			// ("1.27.3", "stable"): the smallest tag, so that the choice
			// does not change with which replica was read first.
			if img.Tag != "" && (o.Image.Tag == "" || img.Tag < o.Image.Tag) {
				o.Image.Tag, o.TagClaimed = img.Tag, claimed
			}
		}
	}
	for _, ro := range m.RunsOn {
		s := seen.Snapshots[ro.Host]
		if s == nil {
			continue // the host failed; the caller reports its error
		}
		found := false
		for _, c := range s.Containers {
			if takesOver(m, ro, c) {
				add(ro.Host, s, c)
				found = true
			}
		}
		if !found {
			missing = append(missing, ro.Host+"/"+target(m, ro))
		}
	}
	for _, h := range seen.labelHosts(m.Name) {
		s := seen.Snapshots[h]
		for _, c := range s.Containers {
			if c.Labels[catalogue.ModuleLabel] == m.Name {
				add(h, s, c)
			}
		}
	}
	for i := range obs {
		slices.Sort(obs[i].Pods)
	}
	slices.SortFunc(obs, func(a, b Observation) int {
		return cmp.Or(
			strings.Compare(a.Host, b.Host),
			strings.Compare(a.Container, b.Container),
			// Two images of one workload container (mid-rollout).
			strings.Compare(a.Image.Digest, b.Image.Digest),
			strings.Compare(a.Image.ImageID, b.Image.ImageID),
			strings.Compare(a.Image.Tag, b.Image.Tag),
		)
	})
	return obs, missing
}

// replicaState is the state of replicas of one image, two states at a
// time: "running" when one runs, else the smaller state word, so that the
// result does not depend on the order the pods were read in.
func replicaState(a, b string) string {
	switch {
	case a == "running" || b == "running":
		return "running"
	case a < b:
		return a
	}
	return b
}

// takesOver reports whether runs_on ro of module m names container c.
func takesOver(m *catalogue.Module, ro catalogue.RunsOn, c host.Container) bool {
	named := ro.Container == "" || c.Name == ro.Container
	switch {
	case ro.Compose != "":
		project, service, _ := strings.Cut(ro.Compose, "/")
		return c.Pod == "" && c.Labels[catalogue.ComposeProjectLabel] == project && c.Labels[catalogue.ComposeServiceLabel] == service
	case ro.Workload != "":
		if pod, ok := strings.CutPrefix(ro.Workload, "pod/"); ok {
			return c.Pod == pod && named
		}
		return c.Workload == ro.Workload && named
	case ro.Selector != nil:
		return c.Workload != "" && ro.Selector.Matches(c.Labels) && named
	case ro.Container != "":
		return c.Name == ro.Container || recreating(c, ro.Container)
	}
	return c.Labels[catalogue.ModuleLabel] == m.Name
}

// recreating reports whether c is the container name renamed as Compose
// renames a service's old container while it recreates it: the first 12
// hex digits of its own ID, "_", the name. Until the new container runs,
// the old one is still the one runs_on names (its floor, and what a
// create of the service's next replica replaces).
func recreating(c host.Container, name string) bool {
	return c.Pod == "" && len(c.ID) >= 12 && c.Name == c.ID[:12]+"_"+name
}

// target describes what runs_on ro names, for the list of what is missing.
func target(m *catalogue.Module, ro catalogue.RunsOn) string {
	var what string
	switch {
	case ro.Compose != "":
		return "compose service " + ro.Compose
	case ro.Workload != "":
		what = ro.Workload
	case ro.Selector != nil:
		what = "selector " + ro.SelectorText
	case ro.Container != "":
		return ro.Container
	default:
		return "label " + catalogue.ModuleLabel + "=" + m.Name
	}
	if ro.Container != "" {
		what += " container " + ro.Container
	}
	return what
}

// containerImage turns what a host says of a container's image into an
// image.Image of the module's repository. The image ID is kept as such and
// never taken for a registry digest.
//
// A container read from the template of a workload scaled to zero has no
// image ID (its ImageID is the template's reference): only its reference
// is kept.
func containerImage(repo string, s *host.Snapshot, c host.Container) (img image.Image, tagClaimed bool) {
	img = image.Image{Repository: repo, ImageID: c.ImageID}
	if c.State == StateScaledToZero {
		img.ImageID = ""
	}
	if c.Image != "" && !strings.HasPrefix(c.Image, "sha256:") {
		if ref, err := name.ParseReference(c.Image); err == nil {
			switch r := ref.(type) {
			case name.Tag:
				if !strings.Contains(c.Image, "@") {
					img.Tag = r.TagStr()
				}
			case name.Digest:
				img.Digest = r.DigestStr()
				// "repo:tag@digest" keeps its tag, as a claim: it was
				// pulled by digest.
				if before, _, ok := strings.Cut(c.Image, "@"); ok {
					if t, err := name.NewTag(before); err == nil && catalogue.HasTag(before) {
						img.Tag, tagClaimed = t.TagStr(), true
					}
				}
			}
		}
	}
	hi, ok := s.Image(c.ImageID)
	if !ok {
		return img, tagClaimed
	}
	img.Created = hi.Created
	img.Labels = hi.Labels
	img.Platform = hi.Platform()
	switch {
	case img.Digest == "":
		img.Digest = repoDigest(repo, hi.RepoDigests)
	case len(hi.RepoDigests) > 0 && !hasDigest(hi.RepoDigests, img.Digest):
		// The reference names a digest the image that runs was never
		// pulled by: the image ID is what runs, and its repo digests are
		// what the engine knows of it. Content beats the claim.
		img.Digest = repoDigest(repo, hi.RepoDigests)
	}
	if s.ImageStore == "classic" {
		img.ConfigDigest = c.ImageID
	}
	return img, tagClaimed
}

// hasDigest reports whether one of repoDigests ("repo@sha256:…") names
// digest.
func hasDigest(repoDigests []string, digest string) bool {
	for _, rd := range repoDigests {
		if strings.HasSuffix(rd, "@"+digest) {
			return true
		}
	}
	return false
}

// repoDigest picks the host's repo digest for repo: the one of that
// repository, else one whose path matches (the host pulled from a mirror),
// else the first. A digest names content whatever repository serves it.
func repoDigest(repo string, repoDigests []string) string {
	var byPath, first string
	_, path, _ := strings.Cut(repo, "/")
	for _, rd := range repoDigests {
		d, err := name.NewDigest(rd)
		if err != nil {
			continue
		}
		if d.Context().Name() == repo {
			return d.DigestStr()
		}
		if byPath == "" && d.Context().RepositoryStr() == path {
			byPath = d.DigestStr()
		}
		if first == "" {
			first = d.DigestStr()
		}
	}
	if byPath != "" {
		return byPath
	}
	return first
}
