-- Observational memory's async buffering: an observation computed in the
-- background before the observer's threshold is stored buffered (1) and
-- becomes part of the observation block only when activated (0).
ALTER TABLE nodekit_am_observations ADD COLUMN buffered INTEGER NOT NULL DEFAULT 0;
