-- Deterministic generator of an employees sample database of the real scale:
-- 300,024 employees numbered from 10001, the 9 real departments, the 24
-- dept_manager rows of the real data, 331,180 dept_emp, 442,714 titles and
-- 2,862,948 salaries (the real data: 331,603, 443,308 and 2,844,047), with
-- current rows ending 9999-01-01.
--
-- Run on the empty tables of schema.sql, before keys.sql and foreign-keys.sql:
--
--   psql -X -v ON_ERROR_STOP=1 -d employees -f sql/generate.sql
--
-- Every value is a function of the row's key: pseudo-randomness comes from
-- hashint8extended(key, seed), never random(), so every run produces the same
-- rows (sql/expected-checksums.txt records their chained MD5). Each step
-- prints the table, its rows and the elapsed time.
--
-- The story behind the numbers: hires from 1985-01-01 to 2000-01-28, births
-- from 1952-02-01 to 1965-02-01, data as of 2002-08-01. One employee in five
-- has left (their rows end on the leaving date); one in ten changed
-- department once; most were promoted once (Staff to Senior Staff, Assistant
-- Engineer to Engineer to Senior Engineer); salaries rise on every hiring
-- anniversary.

SET client_min_messages = warning;
SET DateStyle = ISO;
SELECT clock_timestamp() AS generate_started \gset

-- MARK: - Helpers (temporary: nothing is left in the database)

-- A uniform pseudo-random number in [0, 1) for a key and a seed.
CREATE FUNCTION pg_temp.uniform(key bigint, seed bigint) RETURNS double precision
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ((hashint8extended(key, seed) >> 11) & 9007199254740991)::double precision / 9007199254740992.0;

-- A pseudo-random integer in [0, count) for a key and a seed.
CREATE FUNCTION pg_temp.pick(key bigint, seed bigint, count integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN floor(pg_temp.uniform(key, seed) * count)::integer;

CREATE FUNCTION pg_temp.progress(table_name text, row_count bigint, step_started timestamptz, generate_started timestamptz) RETURNS text
    LANGUAGE sql
    RETURN format('generate: %-13s %10s rows %6s s  (total %5s s)', table_name,
                  to_char(row_count, 'FM9,999,999'),
                  to_char(extract(epoch FROM clock_timestamp() - step_started), 'FM990.0'),
                  to_char(extract(epoch FROM clock_timestamp() - generate_started), 'FM990.0'));

CREATE TEMPORARY TABLE first_names (gender char(1), position integer, name text);
INSERT INTO first_names
SELECT 'M', position - 1, name FROM unnest(ARRAY['Georgi', 'Bezalel', 'Parto', 'Chirstian', 'Kyoichi', 'Tzvetan', 'Sumant', 'Patricio',
          'Eberhardt', 'Berni', 'Guoxiang', 'Kazuhito', 'Cristinel', 'Kazuhide', 'Ramzi', 'Shahaf',
          'Bojan', 'Prasadram', 'Yongqiao', 'Divier', 'Domenick', 'Otmar', 'Elvis', 'Karsten',
          'Jeong', 'Arif', 'Bader', 'Alain', 'Adamantios', 'Pradeep', 'Huan', 'Alejandro',
          'Weiyi', 'Uri', 'Yishay', 'Mingsen', 'Moss', 'Lucien', 'Zvonko', 'Florian',
          'Basil', 'Hidefumi', 'Heping', 'Sanjiv', 'Georgy', 'Brendon', 'Ebbe', 'Berhard',
          'Tse', 'Anoosh', 'Gino', 'Udi', 'Satosi', 'Kwee', 'Reuven', 'Hisao',
          'Hironoby', 'Mokhtar', 'Gao', 'Erez', 'Danel', 'Kshitij', 'Premal', 'Zhongwei',
          'Parviz', 'Vishv', 'Tuval', 'Kenroku', 'Somnath', 'Xinglin', 'Sudharsan', 'Valdiodio',
          'Arumugam', 'Jayson', 'Remzi', 'Sreekrishna', 'Valter', 'Hironobu', 'Xinyu', 'Hiroyasu',
          'Yifei', 'Lidong', 'Goh', 'Emmanuel', 'Tomofumi', 'Niranjan', 'Kwan', 'Zhenbing',
          'Narain', 'Shigeaki', 'Naftali', 'Jaewon', 'Balaji', 'Debatosh', 'Rajmohan', 'Anwar',
          'Aamer', 'Abdelaziz', 'Abdulah', 'Adas', 'Aemilian', 'Ajay', 'Akhilish', 'Alper',
          'Amstein', 'Anestis', 'Arnd', 'Arvind', 'Babette', 'Bartek', 'Bedir', 'Bernd',
          'Bill', 'Boalin', 'Bouchung', 'Boutros', 'Carlo', 'Chaosheng', 'Charlie', 'Chikara',
          'Christophe', 'Claudio', 'Dayanand', 'Dietrich', 'Dines', 'Dung', 'Eckart', 'Eran',
          'Fumiya', 'Gad', 'Genta', 'Gerard', 'Giri', 'Gunter', 'Hans', 'Harngdar',
          'Hatem', 'Heekeun', 'Holgard', 'Hugo', 'Ibibia', 'Ingmar', 'Jaques', 'Jianhua',
          'Jiann', 'Juichirou', 'Kamakshi', 'Keiichiro', 'Khalid', 'Kiyotoshi', 'Kristof', 'Leszek',
          'Luigi', 'Manohar', 'Marco', 'Marek', 'Mihalis', 'Mitsuyuki', 'Morris', 'Mohammed',
          'Nevio', 'Oguz', 'Pascal', 'Peternela', 'Rafols', 'Roberto', 'Sachar', 'Sanjay',
          'Serif', 'Shalesh', 'Stafford', 'Stephen', 'Takahira', 'Teiji', 'Theron', 'Toshimo',
          'Ulf', 'Vidya', 'Volkmar', 'Wuxu', 'Yakkov', 'Yuping', 'Zhonghui', 'Zsolt']) WITH ORDINALITY AS male (name, position)
UNION ALL
SELECT 'F', position - 1, name FROM unnest(ARRAY['Anneke', 'Saniya', 'Duangkaew', 'Mary', 'Lillian', 'Mayuko', 'Suzette', 'Magy',
          'Yinghua', 'Mayumi', 'Breannda', 'Claudi', 'Charlene', 'Margareta', 'Shir', 'Mona',
          'Jungsoon', 'Kendra', 'Amabile', 'Sailaja', 'Hilari', 'Perla', 'Paraskevi', 'Akemi',
          'Leni', 'Abigail', 'Adhemar', 'Aimee', 'Aleksandra', 'Alena', 'Alexandra', 'Alina',
          'Almudena', 'Angel', 'Ariel', 'Arlette', 'Barbara', 'Bojana', 'Bedrich', 'Bella',
          'Bernice', 'Bettina', 'Biswajit', 'Brigitte', 'Carla', 'Catherine', 'Chanjung', 'Chriss',
          'Cristina', 'Dagmar', 'Dalia', 'Dana', 'Deborah', 'Elena', 'Elisabeth', 'Elke',
          'Emma', 'Erica', 'Eva', 'Fatima', 'Fionn', 'Francesca', 'Gabriele', 'Giovanna',
          'Gretta', 'Hanna', 'Heide', 'Helen', 'Hilde', 'Ilse', 'Ingrid', 'Irena',
          'Isabelle', 'Jagoda', 'Jana', 'Jeanne', 'Jolanta', 'Julia', 'Juliane', 'Karin',
          'Katarina', 'Keiko', 'Kirsten', 'Laura', 'Lena', 'Lucia', 'Lucy', 'Maja',
          'Malgorzata', 'Manuela', 'Maria', 'Marina', 'Marjo', 'Martina', 'Meera', 'Mei',
          'Mihoko', 'Mitsuko', 'Monika', 'Nadia', 'Naomi', 'Natasha', 'Nicole', 'Nina',
          'Noriko', 'Olga', 'Paloma', 'Patricia', 'Petra', 'Priya', 'Rachel', 'Radhika',
          'Rena', 'Renata', 'Rita', 'Rosa', 'Sabine', 'Sachiko', 'Sandra', 'Sara',
          'Shanti', 'Silke', 'Simone', 'Sonia', 'Stella', 'Susanne', 'Tamara', 'Tanja',
          'Teresa', 'Ulrike', 'Ursula', 'Valeria', 'Vera', 'Veronika', 'Wendy', 'Xiaoming',
          'Yael', 'Yoko', 'Yuki', 'Zofia', 'Zuzana', 'Kazuko', 'Ewa', 'Zhanna']) WITH ORDINALITY AS female (name, position);

CREATE TEMPORARY TABLE last_names (position integer, name text);
INSERT INTO last_names
SELECT position - 1, name FROM unnest(ARRAY['Facello', 'Simmel', 'Bamford', 'Koblick', 'Maliniak', 'Preusig', 'Zielinski', 'Kalloufi',
          'Peac', 'Piveteau', 'Sluis', 'Bridgland', 'Terkki', 'Genin', 'Nooteboom', 'Cappelletti',
          'Bouloucos', 'Peha', 'Haddadi', 'Warwick', 'Erde', 'Famili', 'Montemayor', 'Pettey',
          'Heyers', 'Berztiss', 'Reistad', 'Tempesti', 'Herbst', 'Demeyer', 'Joslin', 'Tzvieli',
          'Stamatiou', 'Lortz', 'Chappelet', 'Gil', 'Syrzycki', 'Flasterstein', 'Hofting', 'Gomatam',
          'Casley', 'Baek', 'Portugali', 'Lenart', 'Hanabata', 'Swan', 'Baaz', 'Bernatsky',
          'Bierman', 'Waschkowski', 'Rosenblum', 'Meriste', 'Sudbeck', 'Sadowsky', 'Gargeya', 'Sidou',
          'Merlo', 'Kolvik', 'Schusler', 'Orlowska', 'Terwilliger', 'Szmurlo', 'Kambil', 'Rahimi',
          'Acton', 'Cusworth', 'Brender', 'Kawashimo', 'Talmor', 'Azumi', 'Kornyak', 'Spelt',
          'Nastansky', 'Zschoche', 'Standera', 'Collette', 'Nyanchama', 'Matzov', 'Stanfel', 'Wegerle',
          'Pfister', 'Balcerzak', 'Hmelnitsky', 'Krishnan', 'Raman', 'Subramanian', 'Holstead', 'Benzaken',
          'Antony', 'Abbattista', 'Abiteboul', 'Ayache', 'Adachi', 'Aingworth', 'Akazan', 'Alameldin',
          'Albarhamtoshy', 'Alblas', 'Alencar', 'Alpin', 'Ambroszkiewicz', 'Anger', 'Angiulli', 'Anido',
          'Apsitis', 'Armand', 'Aseltine', 'Auyong', 'Avouris', 'Azevdeo', 'Bahk', 'Bakhtiari',
          'Barreiro', 'Beerel', 'Benantar', 'Bennet', 'Benzmuller', 'Berendt', 'Besselaar', 'Birge',
          'Bisiani', 'Blokdijk', 'Bonifati', 'Borstler', 'Boudaillier', 'Bratsberg', 'Brizzi', 'Brodie',
          'Bruckman', 'Buchter', 'Butterworth', 'Cannane', 'Carrere', 'Ceccarelli', 'Chenoweth', 'Chinal',
          'Cincotta', 'Coorg', 'Crabtree', 'Cullers', 'Czap', 'Dalton', 'Danlos', 'Decaestecker',
          'Delgrande', 'Denna', 'Desikan', 'Diderrich', 'Dolinsky', 'Dredge', 'Duclos', 'Dulli',
          'Eastman', 'Edelhoff', 'Emmerich', 'Erie', 'Escriba', 'Etalle', 'Falby', 'Farrag',
          'Feldmann', 'Fetvedt', 'Figueira', 'Fontan', 'Francisci', 'Frijda', 'Fujisawa', 'Gadepally',
          'Garigliano', 'Gecsei', 'Gerteisen', 'Giarratana', 'Glowinski', 'Gornas', 'Granlund', 'Grospietsch',
          'Gustavson', 'Hainaut', 'Hardjono', 'Hartvigsen', 'Heijenga', 'Hellwagner', 'Hiltgen', 'Honglei',
          'Hutton', 'Ibel', 'Iisaka', 'Isaak', 'Itzigsohn', 'Jakobus', 'Jansch', 'Jenevein',
          'Jumpertz', 'Kaiser', 'Karcich', 'Katiyar', 'Kemmerer', 'Keohane', 'Kisuki', 'Klassen',
          'Kohling', 'Kopetz', 'Krohm', 'Kuzuoka', 'Lamba', 'Landherr', 'Lauther', 'Legleitner',
          'Leuchs', 'Lichtner', 'Liesche', 'Lipner', 'Luders', 'Maginnis', 'Mandell', 'Marchegay',
          'McAlpine', 'Mellouli', 'Menhoudj', 'Meszaros', 'Mitsuhashi', 'Moehrke', 'Morrow', 'Munck',
          'Nannarelli', 'Negoita', 'Nergos', 'Nitsch', 'Noriega', 'Ossenbruggen', 'Ozeri', 'Pappas',
          'Parascandalo', 'Pauthner', 'Penttonen', 'Perko', 'Pfau', 'Plessier', 'Pollacia', 'Provine',
          'Puppe', 'Radwan', 'Ranta', 'Ratnaker', 'Redmiles', 'Renear', 'Riesenhuber', 'Rodham',
          'Roison', 'Rouquie', 'Rullman', 'Sanella', 'Sateesh', 'Schaad', 'Schmiedel', 'Schnabel',
          'Schwartzbauer', 'Seghrouchni', 'Setlzner', 'Shimshoni', 'Siepmann', 'Sinicrope', 'Slaats', 'Smailagic',
          'Sommer', 'Speek', 'Stasinski', 'Steen', 'Strehl', 'Sury', 'Swiler', 'Takano',
          'Taubenfeld', 'Thambidurai', 'Thimonier', 'Tokunaga', 'Trachtenberg', 'Tsukuda', 'Uehara', 'Unni',
          'Vaccari', 'Vecchio', 'Velardi', 'Verspoor', 'Viele', 'Vural', 'Waleschkowski', 'Weedman',
          'Whitcomb', 'Wielonsky', 'Wodon', 'Wynblatt', 'Xiaoshan', 'Yamashita', 'Yetto', 'Yurov',
          'Zaccaria', 'Zallocco', 'Zedlitz', 'Zhang', 'Zizka', 'Zockler', 'Zucker', 'Zultner']) WITH ORDINALITY AS last (name, position);

-- The real department managers (24 rows, identical to test_db's dept_manager).
CREATE TEMPORARY TABLE managers (emp_no integer, dept_no char(4), from_date date, to_date date);
INSERT INTO managers VALUES
    (110022, 'd001', '1985-01-01', '1991-10-01'), (110039, 'd001', '1991-10-01', '9999-01-01'),
    (110085, 'd002', '1985-01-01', '1989-12-17'), (110114, 'd002', '1989-12-17', '9999-01-01'),
    (110183, 'd003', '1985-01-01', '1992-03-21'), (110228, 'd003', '1992-03-21', '9999-01-01'),
    (110303, 'd004', '1985-01-01', '1988-09-09'), (110344, 'd004', '1988-09-09', '1992-08-02'),
    (110386, 'd004', '1992-08-02', '1996-08-30'), (110420, 'd004', '1996-08-30', '9999-01-01'),
    (110511, 'd005', '1985-01-01', '1992-04-25'), (110567, 'd005', '1992-04-25', '9999-01-01'),
    (110725, 'd006', '1985-01-01', '1989-05-06'), (110765, 'd006', '1989-05-06', '1991-09-12'),
    (110800, 'd006', '1991-09-12', '1994-06-28'), (110854, 'd006', '1994-06-28', '9999-01-01'),
    (111035, 'd007', '1985-01-01', '1991-03-07'), (111133, 'd007', '1991-03-07', '9999-01-01'),
    (111400, 'd008', '1985-01-01', '1991-04-08'), (111534, 'd008', '1991-04-08', '9999-01-01'),
    (111692, 'd009', '1985-01-01', '1988-10-17'), (111784, 'd009', '1988-10-17', '1992-09-08'),
    (111877, 'd009', '1992-09-08', '1996-01-03'), (111939, 'd009', '1996-01-03', '9999-01-01');

-- MARK: - Careers: one row per employee, the facts every table derives from

SELECT clock_timestamp() AS step_started \gset
CREATE TEMPORARY TABLE careers AS
WITH drawn AS (
    SELECT n AS emp_no,
           date '1952-02-01' + pg_temp.pick(n, 1, 4750) AS birth_date,
           CASE WHEN pg_temp.uniform(n, 2) < 0.6 THEN 'M' ELSE 'F' END AS gender,
           date '1985-01-01' + pg_temp.pick(n, 3, 5506) AS drawn_hire_date,
           pg_temp.uniform(n, 4) < 0.2 AS drawn_leaver,
           pg_temp.uniform(n, 6) AS department_draw
    FROM generate_series(10001, 310024) AS n
), placed AS (
    SELECT d.emp_no, d.birth_date, d.gender,
           least(d.drawn_hire_date, m.from_date) AS hire_date,
           d.drawn_leaver AND m.emp_no IS NULL AS leaver,
           m.emp_no IS NOT NULL AS manager,
           m.from_date AS manager_from_date,
           m.to_date AS manager_to_date,
           coalesce(m.dept_no::text, CASE
               WHEN d.department_draw < 0.06095 THEN 'd001'
               WHEN d.department_draw < 0.11326 THEN 'd002'
               WHEN d.department_draw < 0.16690 THEN 'd003'
               WHEN d.department_draw < 0.38850 THEN 'd004'
               WHEN d.department_draw < 0.64696 THEN 'd005'
               WHEN d.department_draw < 0.70763 THEN 'd006'
               WHEN d.department_draw < 0.86518 THEN 'd007'
               WHEN d.department_draw < 0.92889 THEN 'd008'
               ELSE 'd009' END) AS first_dept_no
    FROM drawn AS d LEFT JOIN managers AS m USING (emp_no)
), ended AS (
    SELECT p.*,
           CASE WHEN p.leaver
                THEN p.hire_date + 1 + pg_temp.pick(p.emp_no, 5, date '2002-08-01' - p.hire_date - 1)
           END AS leave_date
    FROM placed AS p
)
SELECT e.emp_no, e.birth_date, e.gender, e.hire_date, e.manager, e.manager_from_date, e.manager_to_date,
       coalesce(e.leave_date, date '9999-01-01') AS end_date,
       coalesce(e.leave_date, date '2002-08-01') AS last_day,
       e.first_dept_no,
       e.first_dept_no IN ('d004', 'd005', 'd006', 'd008') AS engineering,
       pg_temp.uniform(e.emp_no, 10) AS track_draw,
       CASE WHEN NOT e.manager AND pg_temp.uniform(e.emp_no, 7) < 0.106
                 AND coalesce(e.leave_date, date '2002-08-01') - e.hire_date > 365
            THEN e.hire_date + floor((0.2 + 0.6 * pg_temp.uniform(e.emp_no, 8))
                                     * (coalesce(e.leave_date, date '2002-08-01') - e.hire_date))::integer
       END AS switch_date,
       e.hire_date + 365 + pg_temp.pick(e.emp_no, 11, 365 * 14) AS promotion_date,
       pg_temp.pick(e.emp_no, 12, 365 * 6) AS second_promotion_delay
FROM ended AS e;
SELECT pg_temp.progress('careers', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

-- MARK: - employees, departments, dept_manager

SELECT clock_timestamp() AS step_started \gset
INSERT INTO employees (emp_no, birth_date, first_name, last_name, gender, hire_date)
WITH counts AS (
    SELECT (SELECT count(*) FROM first_names WHERE gender = 'M')::integer AS male,
           (SELECT count(*) FROM first_names WHERE gender = 'F')::integer AS female,
           (SELECT count(*) FROM last_names)::integer AS last
)
SELECT c.emp_no, c.birth_date, f.name, l.name, c.gender, c.hire_date
FROM careers AS c
CROSS JOIN counts
JOIN first_names AS f
  ON f.gender = c.gender
 AND f.position = pg_temp.pick(c.emp_no, 20, CASE WHEN c.gender = 'M' THEN counts.male ELSE counts.female END)
JOIN last_names AS l ON l.position = pg_temp.pick(c.emp_no, 21, counts.last)
-- In key order, as test_db's dump loads them: the joins above return rows in
-- hash order, and a heap in that order makes every read in emp_no order (the
-- list, its pages) fetch one heap page per row.
ORDER BY c.emp_no;
SELECT pg_temp.progress('employees', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

SELECT clock_timestamp() AS step_started \gset
INSERT INTO departments (dept_no, dept_name) VALUES
    ('d001', 'Marketing'), ('d002', 'Finance'), ('d003', 'Human Resources'),
    ('d004', 'Production'), ('d005', 'Development'), ('d006', 'Quality Management'),
    ('d007', 'Sales'), ('d008', 'Research'), ('d009', 'Customer Service');
SELECT pg_temp.progress('departments', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

SELECT clock_timestamp() AS step_started \gset
INSERT INTO dept_manager (emp_no, dept_no, from_date, to_date)
SELECT emp_no, dept_no, from_date, to_date FROM managers ORDER BY emp_no;
SELECT pg_temp.progress('dept_manager', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

-- MARK: - dept_emp: one department, or two after a move

SELECT clock_timestamp() AS step_started \gset
INSERT INTO dept_emp (emp_no, dept_no, from_date, to_date)
SELECT c.emp_no, stint.dept_no, stint.from_date, stint.to_date
FROM careers AS c
CROSS JOIN LATERAL (
    SELECT c.first_dept_no, c.hire_date, coalesce(c.switch_date, c.end_date)
    UNION ALL
    SELECT 'd00' || ((substr(c.first_dept_no, 4)::integer + pg_temp.pick(c.emp_no, 9, 8)) % 9 + 1),
           c.switch_date, c.end_date
    WHERE c.switch_date IS NOT NULL
) AS stint (dept_no, from_date, to_date);
SELECT pg_temp.progress('dept_emp', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

-- MARK: - titles: a track per department, promotions while employed

SELECT clock_timestamp() AS step_started \gset
INSERT INTO titles (emp_no, title, from_date, to_date)
WITH tracks AS (
    SELECT c.*,
           CASE WHEN c.manager THEN ARRAY[CASE WHEN c.engineering THEN 'Senior Engineer' ELSE 'Senior Staff' END]
                WHEN c.engineering AND c.track_draw < 0.08 THEN ARRAY['Technique Leader']
                WHEN c.engineering AND c.track_draw < 0.20 THEN ARRAY['Assistant Engineer', 'Engineer', 'Senior Engineer']
                WHEN c.engineering AND c.track_draw < 0.85 THEN ARRAY['Engineer', 'Senior Engineer']
                WHEN c.engineering THEN ARRAY['Senior Engineer']
                WHEN c.track_draw < 0.85 THEN ARRAY['Staff', 'Senior Staff']
                ELSE ARRAY['Senior Staff'] END AS track
    FROM careers AS c
), steps AS (
    SELECT t.emp_no, t.track, t.end_date,
           ARRAY[t.hire_date, t.promotion_date, t.promotion_date + 365 + t.second_promotion_delay] AS starts,
           t.last_day
    FROM tracks AS t
    WHERE NOT t.manager
)
SELECT s.emp_no, s.track[i], s.starts[i],
       CASE WHEN i < cardinality(s.track) AND s.starts[i + 1] < s.last_day THEN s.starts[i + 1] ELSE s.end_date END
FROM steps AS s
CROSS JOIN LATERAL generate_series(1, cardinality(s.track)) AS i
WHERE i = 1 OR s.starts[i] < s.last_day
UNION ALL
SELECT t.emp_no, step.title, step.from_date, step.to_date
FROM tracks AS t
CROSS JOIN LATERAL (
    SELECT t.track[1], t.hire_date, t.manager_from_date WHERE t.hire_date < t.manager_from_date
    UNION ALL
    SELECT 'Manager', t.manager_from_date, t.manager_to_date
    UNION ALL
    SELECT t.track[1], t.manager_to_date, date '9999-01-01' WHERE t.manager_to_date < date '9999-01-01'
) AS step (title, from_date, to_date)
WHERE t.manager;
SELECT pg_temp.progress('titles', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

-- MARK: - salaries: one row per hiring anniversary, rising every year

SELECT clock_timestamp() AS step_started \gset
INSERT INTO salaries (emp_no, salary, from_date, to_date)
WITH paid AS (
    SELECT c.emp_no, c.hire_date, c.end_date,
           extract(year FROM age(c.last_day - CASE WHEN c.end_date = date '9999-01-01' THEN 0 ELSE 1 END,
                                 c.hire_date))::integer + 1 AS years,
           38000 + floor(37000 * pg_temp.uniform(c.emp_no, 13) ^ 2) AS starting_salary,
           1.01 + 0.04 * pg_temp.uniform(c.emp_no, 14) AS yearly_growth
    FROM careers AS c
)
SELECT p.emp_no,
       round(p.starting_salary * p.yearly_growth ^ (k + 0.5 * pg_temp.uniform(p.emp_no * 64 + k, 15)))::integer,
       (p.hire_date + make_interval(years => k))::date,
       CASE WHEN k = p.years - 1 THEN p.end_date ELSE (p.hire_date + make_interval(years => k + 1))::date END
FROM paid AS p
CROSS JOIN LATERAL generate_series(0, p.years - 1) AS k;
SELECT pg_temp.progress('salaries', :ROW_COUNT, :'step_started', :'generate_started') AS line \gset
\echo :line

DROP TABLE careers, first_names, last_names, managers;
