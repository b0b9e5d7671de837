# Under track-upstream a pin's tag chooses the variant to follow: a pin
# that is no version (or no tag at all) would choose nothing, silently.
module "nginx" {
  image  = "nginx"
  policy = "track-upstream"
  pin    = "latest" # ERROR: Pin is not a version
}

module "ubuntu" {
  image  = "ubuntu"
  policy = "track-upstream"
  pin    = "artful" # ERROR: Pin is not a version
}

module "digest" {
  image  = "registry.example.org/team/digest"
  policy = "track-upstream"
  pin    = "sha256:0000000000000000000000000000000000000000000000000000000000000001" # ERROR: Pin without a tag
}

module "rootless" {
  image  = "registry.example.org/team/rootless"
  policy = "track-upstream"
  pin    = "1.22.6-rootless@sha256:0000000000000000000000000000000000000000000000000000000000000002"
}

module "dated" {
  image      = "registry.example.org/team/dated"
  policy     = "track-upstream"
  versioning = "calver"
  pin        = "2026.08.20"
}

module "kept" {
  image  = "registry.example.org/team/kept"
  policy = "at-least-running"
  pin    = "latest"
}
