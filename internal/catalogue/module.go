package catalogue

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pin-tool/pin/internal/version"
)

var (
	moduleSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "image"}, {Name: "policy"},
			{Name: "pin"}, {Name: "tag"}, {Name: "constraint"}, {Name: "tags"},
			{Name: "versioning"}, {Name: "prerelease"}, {Name: "any_variant"},
			{Name: "platforms"}, {Name: "allow_downgrade"}, {Name: "one_way"},
			{Name: "restore"}, {Name: "allow_unverified"}, {Name: "min_age"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "runs_on", LabelNames: []string{"host"}}, {Type: "verify"}},
	}
	runsOnSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "container"}, {Name: "workload"}, {Name: "selector"}, {Name: "compose"},
	}}
)

// policyWords and workloadWords list the valid words for messages.
var (
	policyWords = func() string {
		q := make([]string, len(Policies))
		for i, p := range Policies {
			q[i] = fmt.Sprintf("%q", p)
		}
		return strings.Join(q, ", ")
	}()
	workloadWords = func() string {
		q := make([]string, len(WorkloadKinds))
		for i, k := range WorkloadKinds {
			q[i] = string(k)
		}
		return strings.Join(q, ", ")
	}()
)

func (l *loader) module(b *hcl.Block, dir string) hcl.Diagnostics {
	m := &Module{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(moduleSchema)
	if prev, ok := l.mods[m.Name]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate module", "A module named %q is already defined at %s. Give each module a unique name.", m.Name, prev.DeclRange))
	} else {
		l.mods[m.Name] = m
		l.c.Modules = append(l.c.Modules, m)
	}
	a := content.Attributes
	m.attrs = make([]attrRange, 0, len(a))
	for k, attr := range a {
		r := attr.Expr.Range()
		m.attrs = append(m.attrs, attrRange{name: k, start: r.Start, end: r.End})
	}
	slices.SortFunc(m.attrs, func(x, y attrRange) int { return strings.Compare(x.name, y.name) })

	var img, policy, scheme, tagsRe string
	diags = append(diags, str(a["image"], &img)...)
	diags = append(diags, str(a["policy"], &policy)...)
	diags = append(diags, str(a["pin"], &m.Pin.Text)...)
	diags = append(diags, str(a["tag"], &m.Tag)...)
	diags = append(diags, str(a["constraint"], &m.ConstraintText)...)
	diags = append(diags, str(a["tags"], &tagsRe)...)
	diags = append(diags, str(a["versioning"], &scheme)...)
	diags = append(diags, boolean(a["prerelease"], &m.Prerelease)...)
	diags = append(diags, boolean(a["any_variant"], &m.AnyVariant)...)
	diags = append(diags, strList(a["platforms"], &m.Platforms)...)
	diags = append(diags, str(a["allow_downgrade"], &m.AllowDowngrade)...)
	diags = append(diags, boolean(a["one_way"], &m.OneWay)...)
	diags = append(diags, str(a["restore"], &m.Restore)...)
	diags = append(diags, allowUnverified(a["allow_unverified"], m)...)
	if at := a["min_age"]; at != nil {
		diags = append(diags, minAge(at, fmt.Sprintf("module %q", m.Name), &m.MinAge)...)
		m.minAgeSet = true
	}

	if a["image"] == nil {
		diags = append(diags, errorf(b.DefRange, "Missing image", "Module %q names no image. Write the repository of the image it runs, without a tag (the tag goes in pin or tag), such as image = %q.", m.Name, exampleImage(m.Name)))
	}
	if a["policy"] == nil {
		diags = append(diags, errorf(b.DefRange, "Missing policy", "Module %q has no policy. Write policy = \"at-least-running\" (lock the newer of the pin and what runs), \"track-upstream\" (follow the registry's newest tag) or \"exact\" (lock the pin, and refuse when something newer runs).", m.Name))
	}
	if attr := a["image"]; attr != nil && img != "" {
		repo, err := name.NewRepository(img)
		switch {
		case strings.ContainsAny(img, "@") || HasTag(img):
			diags = append(diags, errorf(attr.Expr.Range(), "Image names a tag or digest", "image is the repository only, such as %q. Write the tag or digest in pin.", repoPart(img)))
		case err != nil:
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid image reference", "%q is not a repository name (%v). Write a name such as \"registry.example.org/team/service\".", img, err))
		default:
			m.Image = repo.Name()
		}
	}
	if attr := a["policy"]; attr != nil && policy != "" {
		m.Policy = Policy(policy)
		if !slices.Contains(Policies, m.Policy) {
			diags = append(diags, errorf(attr.Expr.Range(), "Unknown policy", "%q is not a policy. Write one of %s.", policy, policyWords))
		}
	}
	if attr := a["pin"]; attr != nil {
		pin, msg := ParsePin(m.Pin.Text)
		if msg != "" {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid pin", "%s", msg))
		} else {
			m.Pin = pin
		}
	}
	if m.Policy == Exact && a["pin"] == nil {
		diags = append(diags, errorf(b.DefRange, "Missing pin", "Module %q has policy \"exact\", which locks exactly the pin. Add pin = \"<tag>@sha256:<digest>\", or choose policy \"at-least-running\" or \"track-upstream\".", m.Name))
	}
	if attr := a["constraint"]; attr != nil && m.ConstraintText != "" {
		c, err := semver.NewConstraint(m.ConstraintText)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid semver constraint", "%q is not a semver range (%v). Write a range such as \">= 1.27, < 2\" or \"~6.10\".", m.ConstraintText, err))
		} else {
			m.Constraint = c
		}
	}
	if attr := a["tags"]; attr != nil {
		re, err := regexp.Compile(tagsRe)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid regular expression", "tags must be a Go regular expression (%v). Write one such as \"^1\\\\.27\\\\.\".", err))
		} else {
			m.Tags = re
		}
	}
	if attr := a["versioning"]; attr != nil {
		s, err := version.ParseScheme(scheme)
		if err != nil {
			diags = append(diags, errorf(attr.Expr.Range(), "Invalid versioning", "%v. Write \"semver\", \"calver\", \"numeric\" or \"regex:<expression with (?P<version>…)>\".", err))
		} else {
			m.Versioning = s
		}
	}
	if attr := a["pin"]; attr != nil && m.Policy == TrackUpstream && m.Pin.Text != "" && (m.Pin.Tag != "" || m.Pin.Digest != "") && (a["versioning"] == nil || m.Versioning.Kind != "") {
		// Under track-upstream the pin's tag chooses which tags to follow
		// (its variant); it locks nothing. A pin that chooses nothing
		// would be ignored without a word.
		if _, ok := m.Versioning.Parse(m.Pin.Tag); !ok {
			detail := fmt.Sprintf("Module %q follows upstream tags (policy \"track-upstream\"): its pin's tag chooses which of them to follow (its variant: pin = \"1.22.6-rootless\" follows the -rootless releases) and locks nothing, so ", m.Name)
			summary := "Pin is not a version"
			switch {
			case m.Pin.Tag == "":
				summary = "Pin without a tag"
				detail += fmt.Sprintf("a digest alone chooses nothing. Write pin = \"<a %s version tag>\", or remove pin; to lock this image, write policy = \"at-least-running\".", m.Versioning)
			default:
				detail += fmt.Sprintf("%q, no %s version, would choose nothing. To follow the floating tag %q, write tag = %q instead of pin; to lock what it names now, write policy = \"at-least-running\"; if the module's tags are versions of another kind, set versioning (\"calver\", \"numeric\" or \"regex:…\").", m.Pin.Tag, m.Versioning, m.Pin.Tag, m.Pin.Tag)
			}
			diags = append(diags, errorf(attr.Expr.Range(), summary, "%s", detail))
		}
	}
	if attr := a["allow_downgrade"]; attr != nil && !HasWords(m.AllowDowngrade) {
		diags = append(diags, errorf(attr.Expr.Range(), "Empty downgrade reason", "allow_downgrade takes the reason the downgrade is wanted, in words (letters or digits), and the reason goes into the lock; this one has none: it is blank, or only spaces or characters nobody sees (a zero-width space, a word joiner). Write the reason, or remove allow_downgrade."))
	}
	if attr := a["restore"]; attr != nil && !HasWords(m.Restore) {
		diags = append(diags, errorf(attr.Expr.Range(), "Empty restore", "restore names the backup a downgrade restores from, in words (letters or digits); this one has none: it is blank, or only spaces or characters nobody sees. Write it, such as \"snapshot forge-db 2026-09-16\", or remove restore."))
	}
	if m.OneWay && m.AllowDowngrade != "" && !HasWords(m.Restore) {
		diags = append(diags, errorf(a["allow_downgrade"].Range, "Downgrade of a one-way service without a restore", "Module %q is one_way: its upgrades migrate data, so going back is a restore, not an undo. Add restore = \"<the backup the downgrade restores from>\".", m.Name))
	}
	if m.Tag != "" && m.ConstraintText != "" {
		diags = append(diags, errorf(a["constraint"].Range, "Floating tag with a constraint", "Module %q follows the floating tag %q, so a version range does not apply. Remove constraint, or remove tag to pick among versioned tags.", m.Name, m.Tag))
	}
	if m.Policy != TrackUpstream && m.Policy != "" {
		for _, k := range []string{"tag", "constraint", "tags", "prerelease", "min_age"} {
			if attr := a[k]; attr != nil {
				diags = append(diags, warnf(attr.Range, "Ignored argument", "%s only applies to policy \"track-upstream\"; module %q has policy %q. Remove it, or change the policy.", k, m.Name, m.Policy))
			}
		}
	}
	var runsOn []*hcl.Block
	for _, vb := range content.Blocks {
		if vb.Type != "verify" {
			runsOn = append(runsOn, vb)
			continue
		}
		if m.Verify != nil {
			diags = append(diags, errorf(vb.DefRange, "Duplicate verify block", "Module %q has a verify block already at %s. Merge the two.", m.Name, m.Verify.DeclRange))
			continue
		}
		v, d := verifyBlock(vb, dir, fmt.Sprintf("module %q", m.Name))
		diags = append(diags, d...)
		m.Verify = v
	}
	content.Blocks = runsOn
	if m.Policy == AtLeastRunning && a["pin"] == nil && len(content.Blocks) == 0 {
		diags = append(diags, errorf(b.DefRange, "Nothing to lock", "Module %q has policy \"at-least-running\" but neither a pin nor a runs_on block. Add pin = \"<tag>@sha256:<digest>\" or runs_on \"<host>\" { container = \"<name>\" }.", m.Name))
	}
	for _, p := range m.Platforms {
		if _, err := v1.ParsePlatform(p); err != nil || !strings.Contains(p, "/") {
			diags = append(diags, errorf(a["platforms"].Expr.Range(), "Invalid platform", "%q is not a platform. Write os/arch[/variant], such as \"linux/amd64\" or \"linux/arm64/v8\".", p))
		}
	}

	for _, rb := range content.Blocks {
		ro := RunsOn{Host: rb.Labels[0], DeclRange: rb.LabelRanges[0]}
		rc, d := rb.Body.Content(runsOnSchema)
		diags = append(diags, d...)
		diags = append(diags, str(rc.Attributes["container"], &ro.Container)...)
		diags = append(diags, str(rc.Attributes["workload"], &ro.Workload)...)
		diags = append(diags, str(rc.Attributes["selector"], &ro.SelectorText)...)
		diags = append(diags, str(rc.Attributes["compose"], &ro.Compose)...)
		if attr := rc.Attributes["compose"]; attr != nil && ro.Compose != "" {
			if msg := parseCompose(ro.Compose); msg != "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid compose service", "%s", msg))
			}
			for _, k := range []string{"container", "workload", "selector"} {
				if other := rc.Attributes[k]; other != nil {
					diags = append(diags, errorf(other.Range, "Conflicting runs_on targets", "runs_on %q names both a Compose service and a %s. Keep compose to take over every container of the service, or %s alone.", ro.Host, k, k))
				}
			}
		}
		if attr := rc.Attributes["workload"]; attr != nil && ro.Workload != "" {
			if msg := parseWorkload(ro.Workload); msg != "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid workload", "%s", msg))
			}
		}
		if attr := rc.Attributes["selector"]; attr != nil {
			sel, msg := ParseSelector(ro.SelectorText)
			if msg != "" {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid label selector", "%s", msg))
			}
			ro.Selector = sel
		}
		if w, s := rc.Attributes["workload"], rc.Attributes["selector"]; w != nil && s != nil {
			diags = append(diags, errorf(s.Range, "Conflicting runs_on targets", "runs_on %q names both a workload and a selector. Keep workload to take over what one controller owns, or selector to take over pods by their labels.", ro.Host))
		}
		m.RunsOn = append(m.RunsOn, ro)
	}
	return diags
}

// parseWorkload checks a runs_on workload, "<kind>/<name>". It returns a
// message saying what to write instead when the workload is invalid.
func parseWorkload(s string) string {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || !slices.Contains(WorkloadKinds, WorkloadKind(kind)) {
		return fmt.Sprintf("%q does not name a workload. Write <kind>/<name> with kind one of %s, in lowercase, such as \"deployment/forgejo\" or \"pod/forgejo-0\".", s, workloadWords)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Sprintf("%q is not a Kubernetes object name: %s. Write the name as kubectl get %s lists it.", name, strings.Join(errs, "; "), kind)
	}
	return ""
}

// composeNameRe is what Compose allows in project and service names
// (project names are lowercase).
var (
	composeProjectRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	composeServiceRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
)

// parseCompose checks a runs_on compose target, "<project>/<service>". It
// returns a message saying what to write instead when it is invalid.
func parseCompose(s string) string {
	project, service, ok := strings.Cut(s, "/")
	if !ok || !composeProjectRe.MatchString(project) || !composeServiceRe.MatchString(service) {
		return fmt.Sprintf("%q does not name a Compose service. Write <project>/<service>, such as \"forge/forgejo\": the project as the label com.docker.compose.project shows it (lowercase letters, digits, '-' and '_'), and the service as the Compose file names it.", s)
	}
	return ""
}

// tagRe is the distribution spec's tag grammar.
var tagRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// ParsePin reads a pin: "tag", "@sha256:…", "sha256:…" or "tag@sha256:…".
// It returns a message saying what to write instead when the pin is invalid.
func ParsePin(s string) (Pin, string) {
	p := Pin{Text: s}
	tag, digest, hasDigest := strings.Cut(s, "@")
	if !hasDigest && strings.HasPrefix(s, "sha256:") {
		tag, digest, hasDigest = "", s, true
	}
	if tag != "" {
		if !tagRe.MatchString(tag) {
			return p, fmt.Sprintf("%q is not a valid tag. A tag has up to 128 letters, digits, '_', '.' and '-', and does not start with '.' or '-'. Write pin = \"<tag>\", \"<tag>@sha256:<digest>\" or \"sha256:<digest>\".", tag)
		}
		p.Tag = tag
	}
	if hasDigest {
		h, err := v1.NewHash(digest)
		if err != nil || h.Algorithm != "sha256" {
			return p, fmt.Sprintf("%q is not a valid digest. Write sha256: followed by 64 lowercase hex digits, as `crane digest` or `docker buildx imagetools inspect` print it.", digest)
		}
		p.Digest = h.String()
	}
	if p.Tag == "" && p.Digest == "" {
		return p, "The pin is empty. Write pin = \"<tag>\", \"<tag>@sha256:<digest>\" or \"sha256:<digest>\"."
	}
	return p, ""
}

// HasTag reports whether an image reference carries a ":tag" after its last
// slash (a registry port before the slash is not a tag).
func HasTag(s string) bool {
	i := strings.LastIndex(s, "/")
	return strings.Contains(s[i+1:], ":")
}

func repoPart(s string) string {
	s, _, _ = strings.Cut(s, "@")
	if HasTag(s) {
		s = s[:strings.LastIndex(s, ":")]
	}
	return s
}

// exampleImage is a repository to show in the message of a module without
// one: registry.example.org/team/<the module's name>, when that name is a
// valid last path component, else …/team/app.
func exampleImage(module string) string {
	r := "registry.example.org/team/" + module
	if _, err := name.NewRepository(r, name.StrictValidation); err != nil || strings.Contains(module, "/") {
		return "registry.example.org/team/app"
	}
	return r
}
