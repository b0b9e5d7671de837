# This file is maintained by pin. It records, for every module of the
# catalogue, the image to run and why. Edit the catalogue, not this file,
# and run "pin resolve" to update it.

hosts = ["mesh-1"]

module "analytics" {
  policy  = "at-least-running"
  image   = "registry.example.org/analytics/web"
  tag     = "latest"
  tags    = ["latest"]
  digest  = "sha256:894d9cb601d66988bbe9dd2e21dd058c0d8cedecbb3aee6c81c46a2c09b0eee3"
  config  = "sha256:27eaba4ad596bc7419ce0b2f9094bc0f73198a351b53441f87d643240fddb472"
  created = "2026-09-17T00:00:00Z"
  source  = "running"
  rule    = "created"
  reason  = "mesh-1/analytics runs latest, newer than the pin sha256:29742d2d37ae (built 2026-09-17T00:00:00Z > 2026-08-20T00:00:00Z): locking the pin would be a downgrade"
  hosts   = ["mesh-1"]

  observed "mesh-1" {
    container = "analytics"
    tag       = "latest"
    digest    = "sha256:894d9cb601d66988bbe9dd2e21dd058c0d8cedecbb3aee6c81c46a2c09b0eee3"
    image_id  = "sha256:27eaba4ad596bc7419ce0b2f9094bc0f73198a351b53441f87d643240fddb472"
    created   = "2026-09-17T00:00:00Z"
  }
}

module "forge" {
  policy  = "at-least-running"
  image   = "registry.example.org/forge/forgejo"
  tag     = "1.27.3"
  tags    = ["1.27.3"]
  digest  = "sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"
  config  = "sha256:6cbb535b5a40061079c813a8399c40125e49d8b0da3917fd1585af7671115565"
  version = "1.27.3"
  created = "2026-09-01T00:00:00Z"
  platforms = {
    "linux/amd64"    = "sha256:9d546f0d846b8d226f5f21e3fadf176936a08839376fe41ed8cf28cb3e72536e"
    "linux/arm64/v8" = "sha256:dd8ac015750edf2c2b1e561bf40717efe5797a9648831cc2c746680a38d89535"
  }
  source = "running"
  rule   = "version"
  reason = "mesh-1/forgejo runs 1.27.3, newer than the pin 1.22.6 (version 1.27.3 > 1.22.6): locking the pin would be a downgrade"
  hosts  = ["mesh-1"]

  observed "mesh-1" {
    container = "forgejo"
    tag       = "1.27.3"
    digest    = "sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"
    image_id  = "sha256:6cbb535b5a40061079c813a8399c40125e49d8b0da3917fd1585af7671115565"
    version   = "1.27.3"
    created   = "2026-09-01T00:00:00Z"
  }
}

module "packages" {
  policy  = "at-least-running"
  image   = "registry.example.org/packages/registry"
  tag     = "6.10.3"
  tags    = ["6.10.3"]
  digest  = "sha256:de6ae79ec9765043b6d01bf958166a0b587b43d5d185872aed921f9cd09bc5e8"
  config  = "sha256:3cbf5c3cb783b0c7498de2a1968bd0704d192438d01feb805cbaa94cfa3d9403"
  version = "6.10.3"
  created = "2026-08-15T00:00:00Z"
  source  = "running"
  rule    = "version"
  reason  = "mesh-1/packages runs 6.10.3, newer than the pin 6.10.1 (version 6.10.3 > 6.10.1): locking the pin would be a downgrade"
  hosts   = ["mesh-1"]

  observed "mesh-1" {
    container = "packages"
    tag       = "6.10.3"
    digest    = "sha256:de6ae79ec9765043b6d01bf958166a0b587b43d5d185872aed921f9cd09bc5e8"
    image_id  = "sha256:3cbf5c3cb783b0c7498de2a1968bd0704d192438d01feb805cbaa94cfa3d9403"
    version   = "6.10.3"
    created   = "2026-08-15T00:00:00Z"
  }
}
