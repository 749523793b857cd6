// Types for the web-locks package (a Node implementation of the Web Locks API,
// used by the unit tests as two tabs' shared navigator.locks).
declare module "web-locks" {
  export const locks: {
    request(name: string, callback: (lock: unknown) => Promise<unknown>): Promise<unknown>;
  };
}
