// The offline page (served by sw.js when the server cannot be reached): its words in the panel's language.
import { applyTheme, loadConfig } from "./config.js";
import { setLanguage, t } from "./i18n.js";

applyTheme();
setLanguage(loadConfig().language);
document.title = `companion-memory · ${t("offline.title")}`;
for (const element of document.querySelectorAll("[data-i18n]")) element.textContent = t(element.dataset.i18n);
