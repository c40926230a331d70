// Icon path data (24x24 viewBox, stroked). Drawn for this project; no icon font, no CDN.
export const ICONS = {
  send: "M4 12l16-8-6 16-2.5-6.5L4 12z",
  stop: "M7 7h10v10H7z",
  plus: "M12 5v14M5 12h14",
  download: "M12 4v11M7 10l5 5 5-5M5 20h14",
  settings: "M12 9a3 3 0 100 6 3 3 0 000-6zM4 12h2M18 12h2M12 4v2M12 18v2M6.3 6.3l1.4 1.4M16.3 16.3l1.4 1.4M6.3 17.7l1.4-1.4M16.3 7.7l1.4-1.4",
  tool: "M14.5 6.5a4 4 0 00-5 5L4 17l3 3 5.5-5.5a4 4 0 005-5l-2.5 2.5-2.5-.5-.5-2.5 2.5-2.5z",
  file: "M7 3h7l5 5v13H7zM14 3v5h5",
  trash: "M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13",
  chat: "M5 5h14v10H9l-4 4z",
  close: "M6 6l12 12M18 6L6 18",
  chevron: "M9 6l6 6-6 6",
  bolt: "M13 3L5 14h6l-1 7 8-11h-6z",
  menu: "M4 7h16M4 12h16M4 17h16",
};
