package scaffold

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/internal/observe"
)

// FromCompose makes a candidate of each service of p that has an image:
// named after the service (else "<project>-<service>"), pinned at the
// image as written (its tag, or tag@digest), and, when hostName is set,
// running on it as runs_on { compose = "<project>/<service>" }. Services
// that are only built, and those of inactive profiles, are skipped.
func FromCompose(p *compose.Project, hostName string, policy catalogue.Policy) ([]Candidate, []Skip, error) {
	var cands []Candidate
	var skips []Skip
	for _, s := range p.Disabled {
		skips = append(skips, Skip{What: "service " + s.Name, Why: fmt.Sprintf("its profiles (%s) are not active; name one with --profile", strings.Join(s.Profiles, ", "))})
	}
	for _, s := range p.Services {
		what := "service " + s.Name
		if s.Ref.File != "" {
			what = s.Ref.Where() + ", service " + s.Name
		}
		if s.Image == "" {
			skips = append(skips, Skip{What: what, Why: "it is only built (build: without image:): there is no image to pin"})
			continue
		}
		repo, pin, err := Repository(s.Image)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
		c := Candidate{Name: ModuleName(s.Name), Alt: ModuleName(p.Name + "-" + s.Name), Image: repo, Policy: policy, Pin: pin, From: what}
		c.tagless(s.Image, "Compose")
		if hostName != "" {
			c.RunsOn = Target{Host: hostName, Compose: p.Name + "/" + s.Name}
		}
		cands = append(cands, c)
	}
	return cands, skips, nil
}

// ManifestKinds are the Kubernetes kinds whose containers init reads.
var ManifestKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "Pod"}

// FromManifests makes a candidate of each distinct image of the workloads
// in refs (init containers included): named after the object, or
// "<object>-<container>" when the object holds several images (two
// references, even of one repository). When
// hostName is set, each runs on it as runs_on { workload =
// "<kind>/<name>", container = "<name>" } when its kind is one runs_on
// names (catalogue.WorkloadKinds), else gets a pin only.
func FromManifests(refs []imageref.Ref, objs map[string]string, hostName string, policy catalogue.Policy) ([]Candidate, []Skip, error) {
	// An object named after itself unless it holds several images: two
	// references, of one repository or of two (nginx:1.7.9 and
	// nginx:1.22.1 are two images).
	images := map[string]map[string]bool{}
	for _, r := range refs {
		if images[r.Object] == nil {
			images[r.Object] = map[string]bool{}
		}
		images[r.Object][r.Value] = true
	}
	var cands []Candidate
	var skips []Skip
	for _, r := range refs {
		what := fmt.Sprintf("%s, %s container %s", r.Where(), r.Object, r.Container)
		kind, obj, _ := strings.Cut(r.Object, "/")
		if !slices.ContainsFunc(ManifestKinds, func(k string) bool { return strings.EqualFold(k, kind) }) {
			skips = append(skips, Skip{What: what, Left: true, Why: fmt.Sprintf("kind %s is not one pin reads (%s)", objs[r.Object], strings.Join(ManifestKinds, ", "))})
			continue
		}
		if strings.Contains(r.Value, "$") {
			skips = append(skips, Skip{What: what, Left: true, Why: "the image holds a variable"})
			continue
		}
		repo, pin, err := Repository(r.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r.Where(), err)
		}
		n := ModuleName(obj)
		if len(images[r.Object]) > 1 {
			n = ModuleName(obj + "-" + r.Container)
		}
		c := Candidate{Name: n, Alt: ModuleName(obj + "-" + r.Container + "-" + kind), Image: repo, Policy: policy, Pin: pin, From: what}
		c.tagless(r.Value, "Kubernetes")
		if hostName != "" && slices.Contains(catalogue.WorkloadKinds, catalogue.WorkloadKind(kind)) {
			c.RunsOn = Target{Host: hostName, Workload: r.Object, Container: r.Container}
		}
		cands = append(cands, c)
	}
	return cands, skips, nil
}

// tagless gives a candidate read from an image written with neither tag
// nor digest the tag it runs as: latest, as the runtime (Compose,
// Kubernetes) pulls it, and says so in its block's comment.
func (c *Candidate) tagless(written, runtime string) {
	if c.Pin != "" {
		return
	}
	c.Pin = "latest"
	c.Notes = append(c.Notes, fmt.Sprintf("%s names no tag: %s runs it as %s:latest, so the module follows latest.", written, runtime, written))
}

// FromHost makes a candidate of each container on hostName (snapshot s)
// that no module of cat takes over: at-least-running with no pin (the
// lock then names what runs), running on the host as runs_on { compose =
// "<project>/<service>" } for a container Compose made (one module per
// service, however many replicas), { workload, container } for a pod's
// container, else { container = "<name>" }. Containers that were created
// and never started, and those started by image ID only, are skipped.
func FromHost(cat *catalogue.Catalogue, hostName string, s *host.Snapshot) ([]Candidate, []Skip) {
	seen := observe.Observed{Snapshots: map[string]*host.Snapshot{hostName: s}}
	taken := map[string]string{}
	if cat != nil {
		for _, m := range cat.Modules {
			obs, _ := observe.Observations(m, seen)
			for _, o := range obs {
				taken[o.Container] = m.Name
			}
		}
	}
	var cands []Candidate
	var skips []Skip
	containers := slices.Clone(s.Containers)
	slices.SortFunc(containers, func(a, b host.Container) int { return strings.Compare(where(a), where(b)) })
	for _, c := range containers {
		what := "container " + hostName + "/" + where(c)
		if m, ok := taken[where(c)]; ok {
			skips = append(skips, Skip{What: what, Why: fmt.Sprintf("module %q already takes it over", m)})
			continue
		}
		if c.NeverStarted() {
			skips = append(skips, Skip{What: what, Why: "it was created and never started"})
			continue
		}
		if c.Image == "" || strings.HasPrefix(c.Image, "sha256:") {
			skips = append(skips, Skip{What: what, Left: true, Why: "it was started from an image ID, which names no repository"})
			continue
		}
		repo, _, err := Repository(c.Image)
		if err != nil {
			skips = append(skips, Skip{What: what, Left: true, Why: err.Error()})
			continue
		}
		cand := Candidate{Image: repo, Policy: catalogue.AtLeastRunning, From: what}
		project, service := c.Labels[catalogue.ComposeProjectLabel], c.Labels[catalogue.ComposeServiceLabel]
		kind, _, _ := strings.Cut(c.Workload, "/")
		switch {
		case c.Pod != "" && !slices.Contains(catalogue.WorkloadKinds, catalogue.WorkloadKind(kind)):
			skips = append(skips, Skip{What: what, Left: true, Why: fmt.Sprintf("its pod is owned by %s, which runs_on cannot name (it names %s workloads)", c.Workload, strings.Join(workloadWords(), ", "))})
			continue
		case c.Pod != "":
			_, obj, _ := strings.Cut(c.Workload, "/")
			cand.Name, cand.Alt = ModuleName(obj), ModuleName(obj+"-"+c.Name)
			cand.RunsOn = Target{Host: hostName, Workload: c.Workload, Container: c.Name}
		case project != "" && service != "":
			cand.Name, cand.Alt = ModuleName(service), ModuleName(project+"-"+service)
			cand.RunsOn = Target{Host: hostName, Compose: project + "/" + service}
			cand.From = fmt.Sprintf("%s (Compose service %s/%s)", what, project, service)
		default:
			cand.Name, cand.Alt = ModuleName(c.Name), ModuleName(hostName+"-"+c.Name)
			cand.RunsOn = Target{Host: hostName, Container: c.Name}
		}
		cands = append(cands, cand)
	}
	return cands, skips
}

func where(c host.Container) string {
	if c.Pod != "" {
		return c.Pod + "/" + c.Name
	}
	return c.Name
}

func workloadWords() []string {
	out := make([]string, len(catalogue.WorkloadKinds))
	for i, k := range catalogue.WorkloadKinds {
		out[i] = string(k)
	}
	return out
}

// FromHelm makes a candidate of each image the values of chart c name
// that a module could take: named after its values path ("worker.image" →
// worker; the chart's own image → the chart's name), pinned at its tag as
// the chart renders it (its appVersion when the map has no tag; latest
// when nothing gives one). An image a "# pin: MODULE" comment marks is
// that module: covered when the catalogue cat has it, else a candidate of
// that name (a marked tag or digest alone names no repository: left out,
// saying what to write). A reference inside a longer string (a container
// argument) is left out, said.
func FromHelm(cat *catalogue.Catalogue, c *helmvalues.Chart, policy catalogue.Policy) ([]Candidate, []Skip, error) {
	found := c.Images()
	var cands []Candidate
	var skips []Skip
	for _, img := range found.Images {
		what := fmt.Sprintf("%s, %s", img.Where, img.Path)
		n := helmName(c.Name, img.Path)
		if img.Marker != nil {
			n = img.Marker.Module
			if cat != nil && cat.Module(n) != nil {
				skips = append(skips, Skip{What: what, Why: fmt.Sprintf("its comment names module %q, which the catalogue has", n)})
				continue
			}
			if img.Marker.Part != "" {
				skips = append(skips, Skip{What: what, Left: true, Why: fmt.Sprintf("its comment marks the %s of module %q, which the catalogue does not have, and a %s alone names no repository: write module %q by hand", img.Marker.Part, n, img.Marker.Part, n)})
				continue
			}
		}
		repo, pin, err := Repository(img.Ref)
		if err != nil {
			skips = append(skips, Skip{What: what, Left: true, Why: err.Error()})
			continue
		}
		cand := Candidate{Name: n, Alt: ModuleName(c.Name + "-" + n), Image: repo, Policy: policy, Pin: pin, From: what}
		if img.TagFrom != "" {
			cand.Notes = append(cand.Notes, fmt.Sprintf("Its map has no tag of its own: the chart renders %s, its tag from %s.", img.Ref, img.TagFrom))
		}
		cand.tagless(img.Ref, "Kubernetes")
		cands = append(cands, cand)
	}
	for _, a := range found.Args {
		skips = append(skips, Skip{What: fmt.Sprintf("%s, %s", a.Where, a.Path), Left: true,
			Why: fmt.Sprintf("it names %s in %q, a value pin does not read as an image (a container argument, a key not named image): give the image a key of its own, or mark the value with # pin: MODULE", a.Ref, a.Value)})
	}
	return cands, skips, nil
}

// helmName is the module name of an image at a values path: the path
// without its last "image" ("worker.image" → worker), the chart's name
// for the chart's own image.
func helmName(chart, path string) string {
	p := strings.TrimSuffix(strings.TrimSuffix(path, "image"), ".")
	if p == "" {
		p = chart
	}
	return ModuleName(strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(p))
}
