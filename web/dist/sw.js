/**
* The dashboard's service worker (docs/dashboard.md, "Offline"), served as
* /sw.js (vite.config.ts builds it on its own, with the build's file list).
*
* - The app itself: every file of the build is stored at install, so a reload
*   while offline opens the dashboard, and every page's chunk is there even if
*   it was never opened. A page load goes to the network first (a new release
*   is seen at once) and falls back to the stored index.html.
* - The signed-in user's reads: a GET the page labels with its user
*   (OWNER_HEADER, offline.ts) goes to the network first; a 200 in the version
*   asked for is stored in that user's own cache, and served from it, marked
*   (COPY_HEADER), when the network fails. The page says whose cache is current
*   (a message at each sign-in and sign-out); every other user's is deleted
*   then, and nothing is stored in or read from a cache that is not current,
*   so one user's reads are never shown to another.
*
* Requests without the label (sign-in, the event stream, writes, uploads,
* other origins) are left to the browser untouched.
*/
const FILES = ["/","/assets/account-C1iO_8AP.js","/assets/admin-seYRQs7O.js","/assets/ask-first-B9QggGUJ.js","/assets/audit-B8wWyogZ.js","/assets/audit-DZIXdCGx.css","/assets/changes-panel-BbgE0OO5.js","/assets/changes-panel-C-elZvAJ.css","/assets/common-CIrrU09p.js","/assets/draft-DCmnxOvv.js","/assets/events-C0f_ubTA.js","/assets/followup-VVy0TmNH.js","/assets/heatmap-90wdRcqZ.js","/assets/heatmap-BqtKpIkw.css","/assets/index-BHps_4tc.css","/assets/index-DGS-iLIv.js","/assets/instant-B27iTVeY.js","/assets/line-BCGcz5oR.css","/assets/line-D0EK6pJ-.js","/assets/lists-COTczmXV.js","/assets/log-iR3ZEOf0.css","/assets/mywork-CnuXJtlZ.js","/assets/report-DIuCpZT8.css","/assets/report-Dxo4wymU.js","/assets/requests-CcJqnt17.js","/assets/risk-BZbz60t7.js","/assets/risk-D-XOY_LB.css","/assets/risks-fhPPYMao.js","/assets/score-history-ClX2jp5o.js","/assets/shell-CpM2lwtc.js","/assets/transfer-CMhsQvh0.js","/assets/transfer-DrnZ8URI.css","/assets/trends-DeChzqP7.js","/assets/view-BO_VN04P.js","/favicon.svg"];
const APP_PREFIX = "riskapi-app-";
const APP = APP_PREFIX + "40cba1f6c1323c67";
const DATA_PREFIX = "riskapi-data-";
/** The page's label of a read: whose it is (tenant and user), as offline.ts writes it. */
const OWNER_HEADER = "Riskapi-Offline-Owner";
/** Set on an answer served from the cache: when it was stored (an ISO time). */
const COPY_HEADER = "Riskapi-Offline-Copy";
const VERSION_HEADER = "Riskapi-Version";
const MODE_HEADER = "Riskapi-Mode";
/**
* The reads worth keeping for offline use: the register's lists and risks and
* what their pages show. Sign-in and /v1/me, secrets (API keys, webhooks), the
* request and audit logs, exports and downloads are never stored.
*/
const CACHEABLE = /^\/v1\/(risks(\/heatmap|\/[^/]+(\/(history|score-history|reviews|actions|acceptances|attachments))?)?|my-work|register\/trends|tenant|users|actions|acceptances)$/;
const NOT_CACHEABLE = new Set(["/v1/risks/export", "/v1/risks/import"]);
/** Paths a page load never gets the app for (web/handler.go, apiPrefixes). */
const API_PREFIXES = [
	"/v1",
	"/v2",
	"/webhooks",
	"/healthz",
	"/readyz",
	"/metrics",
	"/mcp"
];
self.addEventListener("install", (e) => {
	e.waitUntil((async () => {
		const app = await caches.open(APP);
		// "reload": past the HTTP cache, so the files stored are this build's.
		await app.addAll(FILES.map((f) => new Request(f, { cache: "reload" })));
		await self.skipWaiting();
	})());
});
self.addEventListener("activate", (e) => {
	e.waitUntil((async () => {
		for (const name of await caches.keys()) if (name.startsWith(APP_PREFIX) && name !== APP) await caches.delete(name);
		await self.clients.claim();
	})());
});
self.addEventListener("message", (e) => {
	const msg = e.data;
	if (msg?.type !== "owner") return;
	const owner = typeof msg.owner === "string" && msg.owner !== "" ? msg.owner : null;
	e.waitUntil(serially(() => belongsTo(owner)).then(() => e.ports[0]?.postMessage("done")));
});
self.addEventListener("fetch", (e) => {
	const req = e.request;
	if (req.method !== "GET") return;
	const url = new URL(req.url);
	if (url.origin !== self.location.origin) return;
	const owner = req.headers.get(OWNER_HEADER);
	if (owner !== null) {
		if (url.pathname.startsWith("/v1/")) e.respondWith(read(req, url, owner));
		return;
	}
	if (req.mode === "navigate") {
		if (!API_PREFIXES.some((p) => url.pathname === p || url.pathname.startsWith(p + "/"))) e.respondWith(page(req));
		return;
	}
	if (url.pathname.startsWith("/assets/") || FILES.includes(url.pathname)) e.respondWith(file(req));
});
/** page answers a page load from the network, else (offline) with the stored app, which picks the page from the path. */
async function page(req) {
	try {
		return await fetch(req);
	} catch (err) {
		const app = await caches.match("/", {
			cacheName: APP,
			ignoreVary: true
		});
		if (app) return app;
		throw err;
	}
}
/** file answers a file of the build from its store (hashed names never change), else from the network. */
async function file(req) {
	return await caches.match(req, {
		cacheName: APP,
		ignoreVary: true
	}) ?? fetch(req);
}
/**
* read answers a labelled read: the network's answer, stored when it is worth
* keeping; without a network, the owner's stored copy, or a risk's row out of
* a stored list.
*/
async function read(req, url, owner) {
	const headers = new Headers(req.headers);
	headers.delete(OWNER_HEADER);
	const sent = new Request(req, { headers });
	const cacheable = CACHEABLE.test(url.pathname) && !NOT_CACHEABLE.has(url.pathname);
	const key = cacheKey(url, req.headers.get(MODE_HEADER));
	let res;
	try {
		res = await fetch(sent);
	} catch (err) {
		if (!cacheable) throw err;
		const copy = await serially(() => stored(owner, key)) ?? await serially(() => rowOfList(owner, url, req.headers.get(MODE_HEADER)));
		if (copy) return copy;
		throw err;
	}
	if (cacheable && worthKeeping(req, res)) {
		const body = await res.clone().arrayBuffer();
		await serially(() => keep(owner, key, res, body));
	}
	return res;
}
/**
* worthKeeping: a 200 JSON answer in the API version the page asked for (an
* answer in another version would be misread when served later).
*/
function worthKeeping(req, res) {
	const asked = req.headers.get(VERSION_HEADER);
	return res.status === 200 && asked !== null && res.headers.get(VERSION_HEADER) === asked && (res.headers.get("Content-Type") ?? "").startsWith("application/json");
}
/** cacheKey is the read's URL, with its mode: the sandbox's answers are never served as live data, nor the reverse. */
function cacheKey(url, mode) {
	const k = new URL(url.pathname + url.search, self.location.origin);
	if (mode) k.searchParams.set("riskapi-offline-mode", mode);
	return k.href;
}
const dataCache = (owner) => DATA_PREFIX + encodeURIComponent(owner);
/**
* The cache operations, one at a time: a store that checks its owner's cache
* is current and then writes cannot be overtaken by the deletion of that
* cache at a sign-out, which would leave a signed-out user's reads behind.
*/
let queue = Promise.resolve();
function serially(op) {
	const run = queue.then(op, op);
	queue = run.catch(() => undefined);
	return run;
}
/** belongsTo makes owner's cache the current one (none when signed out) and deletes every other user's. */
async function belongsTo(owner) {
	const keep = owner === null ? null : dataCache(owner);
	for (const name of await caches.keys()) if (name.startsWith(DATA_PREFIX) && name !== keep) await caches.delete(name);
	if (keep) await caches.open(keep);
}
/** keep stores an answer in owner's cache, if that cache is the current one. */
async function keep(owner, key, res, body) {
	if (!await caches.has(dataCache(owner))) return;
	const headers = new Headers(res.headers);
	headers.set(COPY_HEADER, new Date().toISOString());
	await (await caches.open(dataCache(owner))).put(key, new Response(body, {
		status: res.status,
		statusText: res.statusText,
		headers
	}));
}
/** stored is owner's copy of the read key, if owner's cache is the current one. */
async function stored(owner, key) {
	if (!await caches.has(dataCache(owner))) return undefined;
	return (await caches.open(dataCache(owner))).match(key, { ignoreVary: true });
}
/**
* rowOfList answers GET /v1/risks/{id}, a risk never read while online, with
* its row in one of owner's stored lists of the same mode (a list's rows are
* whole risks), so a risk seen in a list opens offline too.
*/
async function rowOfList(owner, url, mode) {
	const id = /^\/v1\/risks\/([^/]+)$/.exec(url.pathname)?.[1];
	if (!id || !await caches.has(dataCache(owner))) return undefined;
	const cache = await caches.open(dataCache(owner));
	for (const k of await cache.keys()) {
		const u = new URL(k.url);
		if (u.pathname !== "/v1/risks" || u.searchParams.get("riskapi-offline-mode") !== mode) continue;
		const res = await cache.match(k, { ignoreVary: true });
		if (!res) continue;
		const list = await res.clone().json();
		const row = list.data?.find((r) => r.id === decodeURIComponent(id));
		if (!row) continue;
		const headers = new Headers(res.headers);
		headers.set("Content-Type", "application/json");
		if (typeof row.version === "number") headers.set("ETag", `"${row.version}"`);
		return new Response(JSON.stringify(row), {
			status: 200,
			headers
		});
	}
	return undefined;
}
