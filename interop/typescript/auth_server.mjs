// An OAuth-protected MCP server on the official TypeScript SDK (npm
// `@modelcontextprotocol/sdk`), for `cargo xtask interop`.
//
// The authorization server is the SDK's demo in-memory provider
// (`DemoInMemoryAuthProvider`, shipped under examples/server/ in the
// package's dist) behind the SDK's `mcpAuthRouter`, on its own port like the
// SDK's demo: it approves every authorization at once (`/authorize`
// redirects straight back with a code; the test plays the browser). The
// SDK's `setupAuthServer` helper is not used because it listens on every
// interface; this file mounts the same provider on 127.0.0.1 only. The MCP
// server (ours: an echo tool and `token_grant`) is a resource server guarded
// by the SDK's `requireBearerAuth`, with the SDK's protected resource
// metadata route.
//
// Usage: node auth_server.mjs MCP_PORT AUTH_PORT [TOKEN_SECONDS [REFRESHED_SECONDS]]
//
// Without TOKEN_SECONDS the provider behaves exactly as shipped: one-hour
// access tokens and no refresh token (its refresh grant throws). With it, a
// subclass issues access tokens living TOKEN_SECONDS (REFRESHED_SECONDS when
// they come from a refresh, default 300) with refresh tokens that rotate on
// use, so a client's refresh can be exercised.
//
// Two test hooks on the MCP port, without authentication, reveal no token:
// `GET /interop/state` lets the test await conditions instead of sleeping
// (valid access tokens from the authorization-code grant, tokens issued per
// grant, tokens refused), and `POST /interop/expire` ends every access token
// now (refresh tokens stay), so that the client meets a 401 with a token it
// believes valid.

import { randomUUID } from 'node:crypto';

import express from 'express';
import * as z from 'zod';
import { DemoInMemoryAuthProvider } from '@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
    getOAuthProtectedResourceMetadataUrl,
    mcpAuthMetadataRouter,
    mcpAuthRouter
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/sdk/shared/auth-utils.js';

const SCOPE = 'mcp:tools';
// In every token minted here (not in the demo's own), so the test can tell
// none was printed.
const MARK = 'tssecret';
const HOST = '127.0.0.1';

const [mcpPort, authPort, seconds, refreshedSeconds] = process.argv.slice(2).map(Number);
if (!mcpPort || !authPort) {
    console.error('usage: auth_server.mjs MCP_PORT AUTH_PORT [TOKEN_SECONDS]');
    process.exit(2);
}
const mcpUrl = new URL(`http://${HOST}:${mcpPort}/mcp`);
const issuerUrl = new URL(`http://${HOST}:${authPort}`);

/** The demo provider, counting what it issues; with a lifetime, it also
 * shortens access tokens and adds rotating refresh tokens. */
class InteropProvider extends DemoInMemoryAuthProvider {
    constructor(lifetimeSeconds, refreshedSeconds) {
        // Only tokens requested for this MCP server are issued.
        const expected = resourceUrlFromServerUrl(mcpUrl).href;
        super(resource => resource !== undefined && resource.href === expected);
        this.lifetimeSeconds = lifetimeSeconds;
        this.refreshedSeconds = refreshedSeconds;
        this.refused = 0;
        this.refreshTokens = new Map();
        this.grantOf = new Map();
        this.grants = { authorization_code: 0, refresh_token: 0 };
    }

    async exchangeAuthorizationCode(client, code, verifier) {
        const issued = await super.exchangeAuthorizationCode(client, code, verifier);
        this.grants.authorization_code += 1;
        this.grantOf.set(issued.access_token, 'authorization_code');
        return this.lifetimeSeconds ? this.shorten(issued, client) : issued;
    }

    /** The access token made short-lived, and a refresh token for it. */
    shorten(issued, client) {
        const held = this.tokens.get(issued.access_token);
        held.expiresAt = Date.now() + this.lifetimeSeconds * 1000;
        const refresh = `${MARK}-rt-${randomUUID()}`;
        this.refreshTokens.set(refresh, {
            clientId: client.client_id,
            scopes: held.scopes,
            resource: held.resource
        });
        return { ...issued, expires_in: this.lifetimeSeconds, refresh_token: refresh };
    }

    async exchangeRefreshToken(client, refreshToken, scopes, resource) {
        if (!this.lifetimeSeconds) {
            return super.exchangeRefreshToken(client, refreshToken, scopes, resource);
        }
        const held = this.refreshTokens.get(refreshToken);
        if (held === undefined || held.clientId !== client.client_id) {
            throw new InvalidGrantError('unknown refresh token');
        }
        // Rotation: the refresh token presented is spent.
        this.refreshTokens.delete(refreshToken);
        const granted = scopes && scopes.length > 0 ? scopes : held.scopes;
        if (!granted.every(s => held.scopes.includes(s))) {
            throw new InvalidGrantError('scope beyond the original grant');
        }
        const access = `${MARK}-at-${randomUUID()}`;
        this.tokens.set(access, {
            token: access,
            clientId: client.client_id,
            scopes: granted,
            expiresAt: Date.now() + this.refreshedSeconds * 1000,
            resource: held.resource,
            type: 'access'
        });
        this.grants.refresh_token += 1;
        this.grantOf.set(access, 'refresh_token');
        const next = `${MARK}-rt-${randomUUID()}`;
        this.refreshTokens.set(next, { ...held, scopes: granted });
        return {
            access_token: access,
            token_type: 'bearer',
            expires_in: this.refreshedSeconds,
            scope: granted.join(' '),
            refresh_token: next
        };
    }

    /** Access tokens from the authorization-code grant still valid. */
    liveLoginTokens() {
        const now = Date.now();
        return [...this.tokens.values()].filter(
            t => t.expiresAt > now && this.grantOf.get(t.token) === 'authorization_code'
        ).length;
    }

    expireAccessTokens() {
        for (const held of this.tokens.values()) {
            held.expiresAt = Date.now() - 1000;
        }
    }
}

const provider = new InteropProvider(seconds || 0, refreshedSeconds || 300);

// The authorization server, on its own port.
const authApp = express();
authApp.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: [SCOPE] }));
const oauthMetadata = await (async () => {
    const server = authApp.listen(authPort, HOST);
    await new Promise((resolve, reject) => {
        server.once('listening', resolve);
        server.once('error', reject);
    });
    const answer = await fetch(new URL('/.well-known/oauth-authorization-server', issuerUrl));
    return answer.json();
})();

// The demo's verifier throws a plain Error for an unknown or expired token,
// which `requireBearerAuth` answers with 500; an OAuth `invalid_token` makes
// it a 401 with a challenge, as a resource server must answer.
const verifier = {
    async verifyAccessToken(token) {
        try {
            return await provider.verifyAccessToken(token);
        } catch {
            provider.refused += 1;
            throw new InvalidTokenError('unknown or expired token');
        }
    }
};

function mcpServer() {
    const server = new McpServer({ name: 'ts-auth-interop', version: '1.0.0' });
    server.registerTool(
        'echo',
        { description: 'Returns the given text.', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    server.registerTool(
        'token_grant',
        { description: 'Names the grant that issued the access token this request carries.' },
        async extra => {
            const grant = provider.grantOf.get(extra.authInfo?.token) ?? 'unknown';
            return { content: [{ type: 'text', text: grant }] };
        }
    );
    return server;
}

// The MCP server: stateless Streamable HTTP behind the bearer check.
const app = createMcpExpressApp({ host: HOST });
app.use(
    mcpAuthMetadataRouter({
        oauthMetadata,
        resourceServerUrl: mcpUrl,
        scopesSupported: [SCOPE],
        resourceName: 'ts-auth-interop'
    })
);
const guard = requireBearerAuth({
    verifier,
    requiredScopes: [SCOPE],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    expectedResource: mcpUrl
});
app.post('/mcp', guard, async (req, res) => {
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
        transport.close();
        server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
});
app.all('/mcp', guard, (_req, res) => {
    res.status(405).set('Allow', 'POST').end();
});
app.get('/interop/state', (_req, res) => {
    res.json({
        live_login: provider.liveLoginTokens(),
        grants: provider.grants,
        refused: provider.refused,
        revoked: 0
    });
});
app.post('/interop/expire', (_req, res) => {
    provider.expireAccessTokens();
    res.json({ expired: true });
});
app.listen(mcpPort, HOST);
