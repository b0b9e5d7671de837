# Hand-written for the outdated tests: the lock as it stood before mesh-1
# and mesh-2 moved on.

module "analytics" {
  policy  = "at-least-running"
  image   = "registry.example.org/analytics/web"
  tag     = "latest"
  digest  = "sha256:894d9cb601d66988bbe9dd2e21dd058c0d8cedecbb3aee6c81c46a2c09b0eee3"
  config  = "sha256:27eaba4ad596bc7419ce0b2f9094bc0f73198a351b53441f87d643240fddb472"
  created = "2026-09-17T00:00:00Z"
  source  = "running"
}

module "analytics-canary" {
  policy  = "at-least-running"
  image   = "registry.example.org/analytics/web"
  tag     = "latest"
  digest  = "sha256:894d9cb601d66988bbe9dd2e21dd058c0d8cedecbb3aee6c81c46a2c09b0eee3"
  config  = "sha256:27eaba4ad596bc7419ce0b2f9094bc0f73198a351b53441f87d643240fddb472"
  created = "2026-09-17T00:00:00Z"
  source  = "running"
}

module "forge" {
  policy  = "at-least-running"
  image   = "registry.example.org/forge/forgejo"
  tag     = "1.22.6"
  digest  = "sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
  config  = "sha256:0a70ad70cc3b01ed11e4051b88ef0e042a9b02fb59881176872106ac46890262"
  version = "1.22.6"
  created = "2024-12-12T00:00:00Z"
  source  = "pin"
}

module "forge-lts" {
  policy  = "track-upstream"
  image   = "registry.example.org/forge/forgejo"
  tag     = "1.23.5"
  digest  = "sha256:b237a3b23e7b0493454fc31d0564b231e4df53d7079deaa27b8a6e263446ec47"
  config  = "sha256:7b33322b5780e2711ada9e0318cc7e5d11c41189c81d222952e0fe18a578a774"
  version = "1.23.5"
  created = "2025-03-02T00:00:00Z"
  source  = "upstream"
}

module "forge-nightly" {
  policy  = "track-upstream"
  image   = "registry.example.org/forge/forgejo"
  tag     = "nightly"
  digest  = "sha256:fe63af8ae93decbf99e452febf938935c4a9782c1cf78c9f43311b3afdc7b6e3"
  created = "2026-09-01T00:00:00Z"
  source  = "upstream"
}

module "packages" {
  policy  = "at-least-running"
  image   = "registry.example.org/packages/registry"
  tag     = "6.10.3"
  digest  = "sha256:de6ae79ec9765043b6d01bf958166a0b587b43d5d185872aed921f9cd09bc5e8"
  config  = "sha256:3cbf5c3cb783b0c7498de2a1968bd0704d192438d01feb805cbaa94cfa3d9403"
  version = "6.10.3"
  created = "2026-08-15T00:00:00Z"
  source  = "running"
}
