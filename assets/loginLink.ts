// What the sign-in page's paste field accepts: a login link
// (…/#token=…), a share link (…/s/…#share=…), or the bare owner token.
// It returns the fragment that login.ts signs in from, or undefined.

export function loginFragment(pasted: string): string | undefined {
  const text = pasted.trim();
  if (!text) return undefined;
  const hash = text.indexOf('#');
  if (hash >= 0) {
    const params = new URLSearchParams(text.slice(hash + 1));
    for (const key of ['token', 'share']) {
      const v = params.get(key);
      if (v) return `${key}=${encodeURIComponent(v)}`;
    }
    return undefined;
  }
  // A bare token: one word, not an address without its secret.
  if (/\s|\/|^https?:/i.test(text)) return undefined;
  return `token=${encodeURIComponent(text)}`;
}
