// Loaded in every page's head: the layout knows a script runs (tabs instead of one long
// page, fields shown only for the action chosen). Nothing else happens here.
document.documentElement.classList.add("js");
