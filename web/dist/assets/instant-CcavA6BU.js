function e(e){if(!e)return;let t=new Date(e);return Number.isNaN(t.getTime())?e:t.toISOString()}export{e as t};
//# sourceMappingURL=instant-CcavA6BU.js.map