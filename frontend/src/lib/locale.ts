// WebKitGTK reports the C locale (LANG=C.UTF-8, the default of many Linux
// systems and CI images) as navigator.language = "C", which Intl rejects with
// a RangeError. uPlot formats with Intl.NumberFormat(navigator.language) when
// its module loads, so the page would never start. This module is imported
// first (see main.ts) and, for a tag Intl rejects, makes the page's language
// plain English.
export function usableLanguage(lang: string | undefined): string {
  try {
    if (lang) {
      new Intl.NumberFormat(lang);
      return lang;
    }
  } catch {
    /* fall through */
  }
  return 'en-US';
}

if (typeof navigator !== 'undefined') {
  const lang = usableLanguage(navigator.language);
  if (lang !== navigator.language) {
    Object.defineProperty(navigator, 'language', { value: lang, configurable: true });
    Object.defineProperty(navigator, 'languages', { value: [lang], configurable: true });
  }
}
