// A certified OpenID Connect provider (oidc-provider) for the test suite: it issues JWT access
// tokens through the client-credentials grant, signed with the fixture keys it is told to publish.
//
//   node provider.mjs <port> <kid>[,<kid>...]
//
// The first kid signs; every one listed is published in its JWK Set. Kids name the fixture pairs:
// rsa-1 (tests/fixtures/rsa_private.pem) and rsa-2 (rsa2_private.pem). Clients (secret = id):
// legacy-client and new-client (no role), operator (role admin). Prints "ready <issuer>" once
// listening.
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import Provider from "oidc-provider";

const [port, kids] = process.argv.slice(2);
if (!port || !kids) {
  console.error("usage: node provider.mjs <port> <kid>[,<kid>...]");
  process.exit(2);
}
const fixtures = new URL("../fixtures/", import.meta.url);
const files = { "rsa-1": "rsa_private.pem", "rsa-2": "rsa2_private.pem" };
const keys = kids.split(",").map((kid) => {
  const pem = readFileSync(new URL(files[kid] ?? `no fixture key ${kid}`, fixtures));
  return { ...createPrivateKey(pem).export({ format: "jwk" }), kid, use: "sig", alg: "RS256" };
});

const roles = { operator: ["admin"] };
const clients = ["legacy-client", "new-client", "operator"].map((id) => ({
  client_id: id,
  client_secret: id,
  grant_types: ["client_credentials"],
  redirect_uris: [],
  response_types: [],
  token_endpoint_auth_method: "client_secret_post",
}));

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  jwks: { keys },
  clients,
  scopes: ["api"],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => "urn:tandem",
      getResourceServerInfo: () => ({
        scope: "api",
        audience: "urn:tandem",
        accessTokenTTL: 600,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
  extraTokenClaims: (_ctx, token) => ({ roles: roles[token.clientId] ?? [] }),
});
provider.listen(Number(port), "127.0.0.1", () => console.log(`ready ${issuer}`));
