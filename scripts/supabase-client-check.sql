-- The schema of scripts/supabase-client-check: artists, their albums and
-- tracks, playlists of tracks, a view and a function of a track's row.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS music CASCADE;
CREATE SCHEMA music;
GRANT USAGE ON SCHEMA music TO employees_reader;
CREATE TABLE music.artist (id int PRIMARY KEY, name text NOT NULL, tags text[] NOT NULL DEFAULT '{}', active daterange, profile jsonb);
CREATE TABLE music.album (id int PRIMARY KEY, title text NOT NULL, artist_id int NOT NULL REFERENCES music.artist (id), released date, search tsvector);
CREATE TABLE music.track (id int PRIMARY KEY, name text NOT NULL, album_id int NOT NULL REFERENCES music.album (id), milliseconds int NOT NULL, genres text[]);
CREATE TABLE music.playlist (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE music.playlist_track (
    playlist_id int REFERENCES music.playlist (id), track_id int REFERENCES music.track (id), PRIMARY KEY (playlist_id, track_id));
CREATE VIEW music.long_track AS SELECT id, name, album_id, milliseconds FROM music.track WHERE milliseconds > 300000;
CREATE FUNCTION music.minutes(music.track) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT round($1.milliseconds / 60000.0, 2) $$;
INSERT INTO music.artist VALUES
    (1, 'Queen', '{rock,glam}', '[1970-01-01,1991-11-24)', '{"country": "UK", "members": 4}'),
    (2, 'Miles Davis', '{jazz}', '[1944-01-01,1991-09-28)', '{"country": "US"}'),
    (3, 'Nobody', '{}', NULL, NULL);
INSERT INTO music.album VALUES
    (1, 'A Night at the Opera', 1, '1975-11-21', to_tsvector('english', 'A Night at the Opera, rock opera')),
    (2, 'News of the World', 1, '1977-10-28', to_tsvector('english', 'News of the World, rock anthems')),
    (3, 'Kind of Blue', 2, '1959-08-17', to_tsvector('english', 'Kind of Blue, modal jazz')),
    (4, 'Empty Album', 2, NULL, NULL);
INSERT INTO music.track VALUES
    (1, 'Bohemian Rhapsody', 1, 354000, '{rock,opera}'), (2, 'Love of My Life', 1, 219000, '{ballad}'),
    (3, 'We Will Rock You', 2, 122000, '{rock}'), (4, 'We Are the Champions', 2, 179000, '{rock,anthem}'),
    (5, 'So What', 3, 562000, '{jazz}'), (6, 'Blue in Green', 3, 337000, '{jazz,ballad}');
INSERT INTO music.playlist VALUES (1, 'Long ones'), (2, 'Rock'), (3, 'Empty');
INSERT INTO music.playlist_track VALUES (1, 1), (1, 5), (1, 6), (2, 1), (2, 3), (2, 4);
GRANT SELECT ON ALL TABLES IN SCHEMA music TO employees_reader;
GRANT EXECUTE ON FUNCTION music.minutes(music.track) TO employees_reader;
ANALYZE music.artist, music.album, music.track, music.playlist, music.playlist_track;
